/**
 * Admission of work whose cost grows with the request (docs/server.md, "Bounds on one caller's
 * work"): at most `concurrency` runs at a time, at most `queue` more wait their turn in arrival
 * order, and anything beyond that is refused at once (503 `SERVER_BUSY` with `Retry-After`, or the
 * error `refuse` builds), before its body is read. One mechanism for the webhook, batch resolve and
 * the manager's expansions; `PerCaller` gives each caller its own small admission besides.
 */
import type { Context } from 'hono';
import { DmError } from '../../../client/src/error.js';

export interface AdmissionOptions {
  /** Runs at a time. */
  concurrency: number;
  /** Runs waiting beyond those; more are refused. */
  queue: number;
  /** What the refusal's Retry-After says, seconds (default 1). */
  retryAfterSeconds?: number;
  /** The refusal (default: 503 SERVER_BUSY naming `what`). */
  refuse?: () => DmError;
}

/** Counters a test or /metrics reads: how much ran at once at most, and how much was refused. */
export interface AdmissionCounters {
  running: number;
  waiting: number;
  peakRunning: number;
  refused: number;
}

export class Admission {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  readonly counters: AdmissionCounters = { running: 0, waiting: 0, peakRunning: 0, refused: 0 };

  constructor(
    /** What is admitted, for the refusal's message ("webhook deliveries"). */
    readonly what: string,
    private readonly options: AdmissionOptions,
  ) {}

  /** Runs `work` once admitted; throws the refusal at once when the queue is full. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.options.concurrency) {
      if (this.waiting.length >= this.options.queue) {
        this.counters.refused++;
        throw this.options.refuse?.() ?? busy(this.what, this.options.retryAfterSeconds ?? 1);
      }
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        this.counters.waiting = this.waiting.length;
      });
    } else {
      this.running++;
    }
    this.counters.running = this.running;
    this.counters.peakRunning = Math.max(this.counters.peakRunning, this.running);
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      this.counters.waiting = this.waiting.length;
      // The slot passes straight to the next in line (running stays the same), so nothing arriving
      // in between can overtake the queue.
      if (next) next();
      else this.running--;
      this.counters.running = this.running;
    }
  }

  /**
   * Waits for a slot (or throws the refusal) and holds it until the returned release is called:
   * for work that outlives the handler, such as an answer streamed as the client reads it.
   */
  acquire(): Promise<() => void> {
    return holdSlot((work) => this.run(work));
  }

  /** Nothing running or waiting. */
  get idle(): boolean {
    return this.running === 0 && this.waiting.length === 0;
  }
}

/** 503 SERVER_BUSY: the bounded work `what` is full; retry after `seconds`. */
export function busy(what: string, seconds: number): DmError {
  return new DmError('SERVER_BUSY', `the server is busy with other ${what}; retry in ${seconds} s`, {
    category: 'unreachable',
    details: { retryAfter: seconds },
  });
}

/**
 * One small admission per caller (an anonymous caller is its address): a caller's runs beyond its
 * share wait behind its own, never behind everyone's, and too many of them are refused with 429.
 * Callers with nothing admitted are forgotten, so the map holds only callers with work in flight.
 */
export class PerCaller {
  private readonly callers = new Map<string, Admission>();

  constructor(
    private readonly what: string,
    private readonly options: AdmissionOptions,
  ) {}

  async run<T>(caller: string, work: () => Promise<T>): Promise<T> {
    let admission = this.callers.get(caller);
    if (!admission) {
      admission = new Admission(this.what, {
        ...this.options,
        refuse:
          this.options.refuse ??
          (() =>
            new DmError(
              'CALLER_BUSY',
              `this caller already has ${this.options.concurrency + this.options.queue} ${this.what} in progress; retry when one is answered`,
              { category: 'rate-limited', details: { retryAfter: this.options.retryAfterSeconds ?? 1 } },
            )),
      });
      this.callers.set(caller, admission);
    }
    try {
      return await admission.run(work);
    } finally {
      if (admission.idle && this.callers.get(caller) === admission) this.callers.delete(caller);
    }
  }

  /** As Admission.acquire, in `caller`'s own share. */
  acquire(caller: string): Promise<() => void> {
    return holdSlot((work) => this.run(caller, work));
  }

  /** Callers with work admitted or waiting. */
  get size(): number {
    return this.callers.size;
  }
}

/** A slot of `run` held from when it is admitted until the release (called once; more are no-ops). */
function holdSlot(run: (work: () => Promise<void>) => Promise<void>): Promise<() => void> {
  return new Promise<() => void>((admitted, refused) => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = () => resolve();
    });
    run(() => {
      admitted(release);
      return held;
    }).catch(refused);
  });
}

/**
 * Who is calling, for a per-caller share: the peer address of the connection (the Node server's
 * socket), or `local` for requests that come through no socket (`app.request()` in-process).
 */
export function callerAddress(c: Context): string {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? 'local';
}
