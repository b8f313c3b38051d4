/**
 * Where untrusted templates run (docs/expansion.md, "Isolation"): outside the main process, with a time
 * limit per template and a memory limit per process.
 *
 * - Jinja: a Node child process started with the permission model (`--experimental-permission`,
 *   reading only the engine's own code; no writes, no child processes, no workers, no addons) and
 *   a V8 heap limit; requests over the IPC channel.
 * - Python: one `python3 -I` process per sandbox (that is, per expansion run), JSON lines over
 *   stdio, inside the operating system's boundary (python/boundary-source.ts: namespaces, a root
 *   holding only Python's library, an unprivileged uid, Landlock), with an address-space limit
 *   and audit hooks (python/runner-source.ts).
 *
 * A template that runs out of time or memory kills only its process: the sandbox reports a
 * DmError with category `limit` and starts a fresh process for the next template.
 */
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type * as net from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DmError } from '../../error.js';
import { fromWire, hasPythonValues, toWire } from '../../python/values.js';
import {
  boundaryOf,
  isolationRefused,
  type PythonBoundary,
  type PythonIsolation,
  pythonIsolationFromEnv,
  unprivileged,
} from '../python/boundary.js';
import { compiledRunner } from '../python/runner-cache.js';
import { PYTHON_RUNNER_SOURCE } from '../python/runner-source.js';
import type { SchemaValidationMode, TemplateFile } from '../types.js';
import {
  type ForkedRenderer,
  type ForkRendererOptions,
  forkRenderer,
  rendererCode,
  sentOnceId,
  sharedRendererModules,
} from './fork-renderer.js';
import {
  type RenderAnswer as Answer,
  type RenderFailure as Failure,
  RENDERER_WARM_ARG,
} from './render-protocol.js';
import { rendererSnapshot, snapshotFailed } from './renderer-snapshot.js';

export interface SandboxOptions {
  /** Per template, default 10 000 ms. */
  timeoutMs?: number;
  /** Per rendering process, default 512 MB. */
  memoryMb?: number;
  /** The Python interpreter, default `python3`. */
  python?: string;
  /**
   * What a Python template from a registry needs (docs/expansion.md, "Isolation"): `namespaces`
   * (default), or `best-effort`, the operator's opt-in to run it with what the machine allows
   * (Landlock and the in-process guard) where namespaces are refused. Default: the environment's
   * `DM_PYTHON_ISOLATION`, else `namespaces`.
   */
  pythonIsolation?: PythonIsolation;
  /** Jinja rendering processes working in parallel, default 1 (2 did not pay on 2 busy cores). */
  jinjaProcesses?: number;
  /**
   * Add up each Jinja rendering's CPU time in `timings` (bench/expand.ts). Off by default: the
   * clock reads cost the rendering process a syscall each.
   */
  timings?: boolean;
  /**
   * Where the Jinja renderer's startup snapshot is kept (renderer-snapshot.ts,
   * rendererSnapshotDir: in dm's cache directory); without it the renderer starts from its file.
   */
  snapshots?: string;
  /**
   * Where the Python runner's compiled code is kept (python/runner-cache.ts, pythonRunnerDir: in
   * dm's cache directory); without it the runner is compiled at every start.
   */
  pythonRunners?: string;
}

export interface TemplateRequest {
  /** Template name (import name, reference or path), used in errors. */
  name: string;
  source: string;
  context: Record<string, unknown>;
  /**
   * Files reachable by include/import, by import name. Pass the same object again for the same
   * set of files: it then travels to the rendering process only once.
   */
  files: Record<string, string>;
  /** When true, the context's `imports` is `files` (not sent twice). */
  importsAreFiles?: boolean;
  /**
   * The template is one of the user's own files (LoadedTemplate.ownFile), not a registry's: a
   * Python one runs also where the namespace boundary is refused.
   */
  ownFile?: boolean;
  /**
   * A schema to validate `context.properties` against first (filling defaults); like a file set,
   * it travels to a rendering process once.
   */
  schema?: TemplateFile;
}

export type PythonResult = { text: string } | { data: unknown };

export type { PythonBoundary, PythonIsolation };

/** Properties to validate against a template's schema (RenderSandbox.applySchema). */
export interface SchemaRequest {
  /** The schema file; travels to a rendering process once. */
  schema: TemplateFile;
  properties: Record<string, unknown>;
  /** Names the resource in messages: `name (template path)`. */
  subject: string;
  mode: SchemaValidationMode;
  /** The template is one of the user's own files (LoadedTemplate.ownFile). */
  ownFile?: boolean;
}

/** How properties are checked against a request's schema (docs/expansion.md, "Schemas"). */
export type SchemaCheck = Pick<SchemaRequest, 'subject' | 'mode' | 'ownFile'>;

/** Properties completed by a schema, and the violations `warn` mode reports. */
export interface CheckedProperties {
  properties: Record<string, unknown>;
  violations: string[];
}

/** The one-file "file set" a schema travels in (a schema is sent to a process once, as files are). */
const schemaFileSets = new WeakMap<TemplateFile, Record<string, string>>();

function schemaFileSet(schema: TemplateFile): Record<string, string> {
  let files = schemaFileSets.get(schema);
  if (!files) {
    files = { [schema.path]: schema.content };
    schemaFileSets.set(schema, files);
  }
  return files;
}

const NO_FILES: Record<string, string> = {};

/**
 * Where a sandbox's time went, in CPU milliseconds of each rendering process's own work (the
 * processes run beside the main one, so these overlap with it): Jinja rendering and reading the
 * rendering as YAML in the Jinja process; GenerateConfig and encoding its result in the Python
 * process. bench/expand.ts prints them.
 */
export interface SandboxTimings {
  /** Validating properties against schemas (and filling defaults), in the Jinja process. */
  jinjaSchemaMs: number;
  jinjaRenderMs: number;
  jinjaYamlMs: number;
  pythonRunMs: number;
  pythonEncodeMs: number;
}

/**
 * A request whose context travels in the wire form when it holds what JSON and structured clone
 * lose (a float such as 1.0, a dict's order of integer-like keys; python/values.ts).
 */
function onWire(request: TemplateRequest): { request: TemplateRequest; extra: Record<string, unknown> } {
  if (!hasPythonValues(request.context)) return { request, extra: {} };
  return {
    request: { ...request, context: toWire(request.context) as Record<string, unknown> },
    extra: { wire: true },
  };
}

function answerData(answer: { data?: unknown; wire?: boolean }): unknown {
  return answer.wire ? fromWire(answer.data) : answer.data;
}

type WorkerOptions = Required<
  Omit<SandboxOptions, 'jinjaProcesses' | 'timings' | 'snapshots' | 'pythonRunners'>
> &
  Pick<SandboxOptions, 'snapshots' | 'pythonRunners'>;

interface Pending {
  resolve: (answer: Answer) => void;
  reject: (error: Error) => void;
  name: string;
  request: TemplateRequest;
  extra: Record<string, unknown>;
}

const here = dirname(fileURLToPath(import.meta.url));
const DEFAULT_MEMORY_MB = 512;
const DEFAULT_PYTHON = 'python3';

/** Node 20 calls the permission model experimental; 22.13 and later name it `--permission`. */
function failureToError(engine: 'Jinja' | 'Python', name: string, f: Failure): DmError {
  if (f.kind === 'dm-error' && f.error) {
    return new DmError(f.error.code, f.message, {
      category: f.error.category,
      ...(f.error.details ? { details: f.error.details } : {}),
      ...(f.error.hint ? { hint: f.error.hint } : {}),
    });
  }
  // Errors about the rendered text, raised where it was parsed: their message is complete.
  if (f.kind === 'yaml') return new DmError('INVALID_YAML', f.message, { category: 'invalid-input' });
  if (f.kind === 'limit-data') return new DmError('YAML_TOO_LARGE', f.message, { category: 'limit' });
  const where = f.line ? `${f.file ?? name}:${f.line}` : (f.file ?? name);
  if (f.kind === 'blocked') {
    return new DmError(
      'TEMPLATE_BLOCKED',
      `${where}: blocked: ${f.message.replace(/ is blocked in templates$/, '')} is not allowed in templates`,
      {
        category: 'blocked',
        details: { template: name, file: f.file ?? name, ...(f.line ? { line: f.line } : {}) },
      },
    );
  }
  if (f.kind === 'limit') {
    return new DmError('TEMPLATE_LIMIT', `${where}: limit: ${f.message}`, {
      category: 'limit',
      details: { template: name, file: f.file ?? name, ...(f.line ? { line: f.line } : {}) },
    });
  }
  return new DmError(
    engine === 'Jinja' ? 'JINJA_ERROR' : 'PYTHON_TEMPLATE_ERROR',
    `${where}: ${f.kind === 'compile' ? 'cannot compile template: ' : ''}${f.message}`,
    {
      category: f.kind === 'compile' ? 'invalid-input' : 'error',
      details: { template: name, file: f.file ?? name, ...(f.line ? { line: f.line } : {}) },
    },
  );
}

/**
 * One rendering process speaking request/answer messages, restarted after it dies. Requests are
 * pipelined (the process answers them in order, one at a time); the time limit of a request
 * starts when it reaches the head of that queue, so waiting behind others never counts. When a
 * request runs out of time the process is killed and the requests queued behind it are sent
 * again to a fresh process.
 */
abstract class Worker {
  protected child: ChildProcess | undefined;
  protected pending = new Map<number, Pending>();
  /** Ids in the order they were sent: the process answers the head first. */
  private queue: number[] = [];

  /** Requests sent and not answered yet (for choosing the least busy process). */
  get load(): number {
    return this.outstanding;
  }

  private outstanding = 0;
  private headTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private starting: Promise<void> | undefined;
  /** File sets the current process already holds. */
  private sentFileSets = new Set<number>();

  constructor(
    protected readonly engine: 'Jinja' | 'Python',
    protected readonly options: WorkerOptions,
  ) {}

  /**
   * Requests dispatched in this turn of the event loop, sent together once it ends (one message
   * or one write instead of one per request: siblings are dispatched in bursts).
   */
  private outbox: { child: ChildProcess; messages: Record<string, unknown>[]; ids: number[] } | undefined;

  protected abstract start(): Promise<ChildProcess>;
  /** Sends requests, in order, to the process. */
  protected abstract send(child: ChildProcess, messages: Record<string, unknown>[]): void;

  /** When the request at the head of the queue got there (performance.now()). */
  private headSince = 0;

  /**
   * The head of the queue changed: its time starts now. One timer serves the queue: when it
   * fires for a request answered meanwhile, it is set again for what the new head has left (not
   * a timer per answer).
   */
  private armHead(): void {
    if (this.queue.length === 0) {
      if (this.headTimer) clearTimeout(this.headTimer);
      this.headTimer = undefined;
      return;
    }
    this.headSince = performance.now();
    this.headTimer ??= setTimeout(() => this.checkHead(), this.limitMs);
  }

  private get limitMs(): number {
    return this.options.timeoutMs + (this.engine === 'Python' ? 1000 : 0);
  }

  private checkHead(): void {
    this.headTimer = undefined;
    const head = this.queue[0];
    if (head === undefined) return;
    const left = this.headSince + this.limitMs - performance.now();
    if (left > 0) this.headTimer = setTimeout(() => this.checkHead(), left);
    else this.onTimeout(head);
  }

  private onTimeout(id: number): void {
    const p = this.pending.get(id);
    this.pending.delete(id);
    const rest = this.queue
      .filter((q) => q !== id)
      .map((q) => this.pending.get(q)!)
      .filter(Boolean);
    this.pending.clear();
    this.queue = [];
    this.kill();
    p?.reject(
      new DmError(
        'TEMPLATE_LIMIT',
        `${p.name}: limit: took longer than ${this.options.timeoutMs / 1000}s (time limit)`,
        {
          category: 'limit',
          details: { template: p.name, timeoutMs: this.options.timeoutMs },
        },
      ),
    );
    for (const other of rest) void this.dispatch(other);
  }

  protected onAnswer(answer: Answer): void {
    const p = this.pending.get(answer.id);
    if (!p) return;
    this.pending.delete(answer.id);
    const at = this.queue.indexOf(answer.id);
    if (at >= 0) this.queue.splice(at, 1);
    if (at === 0) this.armHead();
    p.resolve(answer);
  }

  protected onExit(reason: string): void {
    this.child = undefined;
    this.sentFileSets = new Set();
    if (this.headTimer) clearTimeout(this.headTimer);
    this.headTimer = undefined;
    const outOfMemory = /memory|SIGABRT|SIGKILL|SIGSEGV|code 134/.test(reason);
    for (const id of this.queue) {
      const p = this.pending.get(id);
      if (!p) continue;
      p.reject(
        new DmError(
          'TEMPLATE_LIMIT',
          `${p.name}: limit: the ${this.engine} renderer stopped (${reason})${outOfMemory ? `; memory limit ${this.options.memoryMb} MB` : ''}`,
          { category: 'limit', details: { template: p.name } },
        ),
      );
    }
    this.pending.clear();
    this.queue = [];
  }

  protected async ensure(): Promise<ChildProcess> {
    if (this.child) return this.child;
    if (!this.starting) {
      this.starting = this.start().then((child) => {
        this.starting = undefined;
        // Closed while starting (a warm start the run did not need): the process goes at once.
        if (this.closed) {
          killForGood(child);
          return;
        }
        this.child = child;
      });
      this.starting.catch(() => {
        this.starting = undefined;
      });
    }
    await this.starting;
    if (!this.child) throw new DmError('SANDBOX_FAILED', `the ${this.engine} renderer did not start`);
    return this.child;
  }

  /** Starts the process now (a failure to start is reported by the first request). */
  warm(): void {
    this.ensure().catch(() => {});
  }

  /**
   * A request without the files when the process has them already, and without the source when
   * it is the file of that name there (the process reads it from the file set).
   */
  private withFiles(request: TemplateRequest): Record<string, unknown> {
    const { files, source, schema, ...all } = request;
    const rest: Record<string, unknown> = files[request.name] === source ? all : { ...all, source };
    if (schema) {
      // The schema's path names it in its one-file set.
      const schemaFiles = schemaFileSet(schema);
      rest.schema = schema.path;
      Object.assign(rest, this.fileSet('schemaFilesId', 'schemaFiles', schemaFiles));
    }
    return { ...rest, ...this.fileSet('filesId', 'files', files) };
  }

  /** `{[idKey]: id}`, and the files themselves the first time this process gets them. */
  private fileSet(idKey: string, filesKey: string, files: Record<string, string>): Record<string, unknown> {
    const id = sentOnceId(files);
    if (this.sentFileSets.has(id)) return { [idKey]: id };
    this.sentFileSets.add(id);
    return { [idKey]: id, [filesKey]: files };
  }

  private async dispatch(p: Pending): Promise<void> {
    let child: ChildProcess;
    try {
      child = await this.ensure();
    } catch (error) {
      p.reject(error as Error);
      return;
    }
    const id = this.nextId++;
    this.pending.set(id, p);
    this.queue.push(id);
    if (this.queue.length === 1) this.armHead();
    const message = { ...this.withFiles(p.request), ...p.extra, id };
    if (this.outbox?.child === child) {
      this.outbox.messages.push(message);
      this.outbox.ids.push(id);
      return;
    }
    this.outbox = { child, messages: [message], ids: [id] };
    process.nextTick(() => this.flush());
  }

  private flush(): void {
    const outbox = this.outbox;
    this.outbox = undefined;
    // Meant for a process that has gone since: its requests were failed or sent again already.
    if (!outbox || outbox.child !== this.child) return;
    try {
      this.send(outbox.child, outbox.messages);
    } catch (error) {
      const failed = new Set(outbox.ids);
      for (const id of outbox.ids) {
        const p = this.pending.get(id);
        this.pending.delete(id);
        p?.reject(error as Error);
      }
      const head = this.queue[0];
      this.queue = this.queue.filter((q) => !failed.has(q));
      if (this.queue[0] !== head) this.armHead();
    }
  }

  request(name: string, request: TemplateRequest, extra: Record<string, unknown> = {}): Promise<Answer> {
    this.outstanding++;
    return new Promise<Answer>((resolve, reject) => {
      void this.dispatch({ resolve, reject, name, request, extra });
    }).finally(() => {
      this.outstanding--;
    });
  }

  private closed = false;

  /** Kills the process for good, also one still starting. */
  shutdown(): void {
    this.closed = true;
    this.kill();
  }

  kill(): void {
    const child = this.child;
    this.child = undefined;
    this.sentFileSets = new Set();
    if (child) killForGood(child);
  }
}

/**
 * How a Jinja rendering process is started: the one set-up, for a sandbox and for an early start.
 * From its startup snapshot when `snapshots` keeps one (renderer-snapshot.ts).
 */
export function jinjaRendererOptions(memoryMb: number, snapshots: string | undefined): ForkRendererOptions {
  const code = rendererCode('jinja-child', () => {
    const srcDir = resolve(here, '../..');
    const nunjucksDir = dirname(fileURLToPath(import.meta.resolve('nunjucks/package.json')));
    return {
      entry: join(here, 'jinja-child.js'),
      readTrees: [resolve(here, '..'), dirname(nunjucksDir)],
      readFiles: [...sharedRendererModules(srcDir), join(resolve(here, '../../../../..'), 'package.json')],
    };
  });
  const snapshot = rendererSnapshot(snapshots, code, memoryMb);
  return { ...code, memoryMb, label: 'the Jinja renderer', ...(snapshot ? { snapshot } : {}) };
}

/**
 * How the Python rendering process is started (command, arguments, spawn options): as `nobody`
 * when dm runs as root, so that no file only root may read is readable and RLIMIT_NPROC bounds
 * its threads (docs/expansion.md, "Isolation").
 */
export function pythonCommand(
  python: string,
  memoryMb: number,
  runners?: string,
): [string, string[], SpawnOptions, Buffer?] {
  // From the runner's compiled code when dm's cache keeps it: a bootstrap that reads it from
  // stdin first (python/runner-cache.ts).
  const compiled = compiledRunner(runners, python);
  const command: [string, string[], SpawnOptions] = [
    python,
    ['-I', '-c', compiled ? compiled.bootstrap : PYTHON_RUNNER_SOURCE, String(memoryMb)],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
      cwd: '/',
      ...unprivileged(),
    },
  ];
  return compiled ? [...command, compiled.code] : command;
}

/** Starts the Python process of pythonCommand: its compiled runner, if any, goes first on stdin. */
function spawnPython([command, args, options, code]: ReturnType<typeof pythonCommand>): ChildProcess {
  const child = spawn(command, args, options);
  // A process gone meanwhile: its exit is what reports it.
  child.stdin?.on('error', () => {});
  if (code) child.stdin?.write(code);
  return child;
}

/** The key of an early Python process: its command (the code on stdin is the bootstrap's). */
function pythonKey([command, args, options]: ReturnType<typeof pythonCommand>): string {
  return `python\0${JSON.stringify([command, args, options])}`;
}

/**
 * Rendering processes started before the sandbox that uses them exists (`dm expand` starts them
 * before the CLI loads; cli/prestart.ts). Each is keyed by everything it was started with, so a
 * sandbox takes one over only where it would have started the very same process; one that died
 * meanwhile is not taken, and those never taken are killed when dm exits. Until taken they do not
 * keep dm running.
 */
interface EarlyProcess {
  child: ChildProcess;
  forked?: ForkedRenderer;
  dead: boolean;
}
const early = new Map<string, EarlyProcess>();
let killEarlyAtExit = false;

function handles(child: ChildProcess): { ref(): void; unref(): void }[] {
  const out: ({ ref(): void; unref(): void } | null | undefined)[] = [
    child,
    child.channel,
    child.stdin as net.Socket | null,
    child.stdout as net.Socket | null,
    child.stderr as net.Socket | null,
  ];
  return out.filter((h): h is { ref(): void; unref(): void } => !!h && typeof h.unref === 'function');
}

/**
 * Kills a rendering process, and dm does not wait for it to be gone: once killed it runs no
 * more code, and its exit (a busy machine takes tens of ms to tear a Node process down) would
 * only hold dm's own exit back.
 */
function killForGood(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const h of handles(child)) h.unref();
}

function keep(key: string, entry: EarlyProcess): void {
  if (early.has(key)) {
    killForGood(entry.child);
    return;
  }
  // Once per process (the expansion agent starts early processes again after every run).
  if (!killEarlyAtExit) {
    killEarlyAtExit = true;
    process.once('exit', () => {
      for (const e of early.values()) if (e.child.exitCode === null) e.child.kill('SIGKILL');
      early.clear();
    });
  }
  entry.child.once('exit', () => {
    entry.dead = true;
  });
  entry.child.once('error', () => {
    entry.dead = true;
  });
  for (const h of handles(entry.child)) h.unref();
  early.set(key, entry);
}

function takeEarly(key: string): EarlyProcess | undefined {
  const entry = early.get(key);
  if (!entry) return undefined;
  early.delete(key);
  if (entry.dead || entry.child.exitCode !== null || entry.child.signalCode !== null) {
    killForGood(entry.child);
    return undefined;
  }
  for (const h of handles(entry.child)) h.ref();
  return entry;
}

/** What startRenderersEarly is told beside the sandbox's own options. */
export interface EarlyStartOptions {
  /**
   * Each process serves a warm-up of dm's own before it says it is ready (Jinja:
   * renderer-warm-up.ts; Python: the runner's `_warm_up`), so that a run taking it over finds its
   * code warm; nothing of the warm-up is left for a run to see (docs/expansion.md, "Speed"). For
   * processes started ahead of a run (a per-user agent's), not for `dm expand`'s own start: the
   * warm-up costs CPU that a run starting now would wait for.
   */
  warm?: boolean;
}

/** The Python command with the runner's warm-up asked for (the runner's `_warm_up`). */
function warmPython([command, args, ...rest]: ReturnType<typeof pythonCommand>): ReturnType<
  typeof pythonCommand
> {
  return [command, [...args, RENDERER_WARM_ARG], ...rest];
}

/**
 * Settles once the Python process wrote something (its ready line, first) or closed its output,
 * without reading it: the sandbox that takes the process over reads the line itself.
 */
function pythonSaidSomething(child: ChildProcess): Promise<void> {
  const out = child.stdout;
  if (!out) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      out.off('readable', done);
      out.off('close', done);
      resolve();
    };
    out.on('readable', done);
    out.on('close', done);
  });
}

/**
 * Starts the rendering processes a `dm expand` with these options will ask for, before its
 * sandbox exists (see EarlyProcess). A failure to start shows when the sandbox takes the process
 * over and starts its own. A process started warm is taken as the very one the sandbox would start.
 * Resolves once the processes started are ready (their warm-up done) or gone; nothing needs to wait
 * for it.
 */
export function startRenderersEarly(
  engines: { jinja?: boolean; python?: boolean },
  options: Pick<SandboxOptions, 'memoryMb' | 'python' | 'snapshots' | 'pythonRunners'> &
    EarlyStartOptions = {},
): Promise<void> {
  const memoryMb = options.memoryMb ?? DEFAULT_MEMORY_MB;
  const ready: Promise<unknown>[] = [];
  if (engines.jinja) {
    const fork = jinjaRendererOptions(memoryMb, options.snapshots);
    const forked = forkRenderer(options.warm ? { ...fork, warm: true } : fork);
    ready.push(forked.ready.catch(() => {}));
    keep(`jinja\0${JSON.stringify(fork)}`, { child: forked.child, forked, dead: false });
  }
  if (engines.python) {
    const command = pythonCommand(options.python ?? DEFAULT_PYTHON, memoryMb, options.pythonRunners);
    const child = spawnPython(options.warm ? warmPython(command) : command);
    ready.push(pythonSaidSomething(child));
    keep(pythonKey(command), { child, dead: false });
  }
  return Promise.all(ready).then(() => {});
}

class JinjaWorker extends Worker {
  protected async start(): Promise<ChildProcess> {
    const fork = jinjaRendererOptions(this.options.memoryMb, this.options.snapshots);
    const forked = takeEarly(`jinja\0${JSON.stringify(fork)}`)?.forked ?? forkRenderer(fork);
    if (!fork.snapshot) return this.attach(forked);
    try {
      return await this.attach(forked);
    } catch {
      // A snapshot that does not start (damaged, or of another build) is deleted and made again
      // (renderer-snapshot.ts); this run starts the renderer from its file.
      const { snapshot, ...plain } = fork;
      snapshotFailed(this.options.snapshots as string, plain, this.options.memoryMb, snapshot);
      return this.attach(forkRenderer(plain));
    }
  }

  private attach({ child, ready, outOfMemory }: ForkedRenderer): Promise<ChildProcess> {
    child.on('message', (m: unknown) => {
      if ((m as { id?: unknown }).id !== undefined) this.onAnswer(m as Answer);
    });
    child.on('exit', (code, signal) => {
      if (this.child === child || this.child === undefined) {
        this.onExit(outOfMemory() ? 'out of memory' : signal ? `signal ${signal}` : `exit code ${code}`);
      }
    });
    return ready;
  }

  protected send(child: ChildProcess, messages: Record<string, unknown>[]): void {
    child.send(messages);
  }
}

/** Largest answer accepted from the Python process. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** Splits a byte stream into lines, refusing a line longer than the limit. */
class LineSplitter {
  onLine: (line: string) => void = () => {};
  overflowed = false;
  private parts: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.overflowed) return;
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      let line: string;
      // A line within one chunk (the usual case) is decoded where it is, not copied first.
      if (this.parts.length === 0) line = chunk.toString('utf8', start, nl);
      else {
        this.parts.push(chunk.subarray(start, nl));
        line = Buffer.concat(this.parts).toString('utf8');
        this.parts = [];
        this.size = 0;
      }
      start = nl + 1;
      this.onLine(line);
    }
    if (start < chunk.length) {
      this.parts.push(chunk.subarray(start));
      this.size += chunk.length - start;
      if (this.size > this.maxBytes) {
        this.overflowed = true;
        this.parts = [];
        this.onOverflow();
      }
    }
  }
}

class PythonWorker extends Worker {
  /** The layers of the operating system's boundary the process entered, and why namespaces not. */
  private boundary: PythonBoundary = { layers: [], refused: null };

  /**
   * Refuses a registry's template where the process could not enter namespaces, unless the
   * operator opted in (docs/expansion.md, "Isolation").
   */
  async admit(name: string): Promise<void> {
    if (this.options.pythonIsolation === 'best-effort') return;
    await this.ensure();
    if (this.boundary.layers.includes('namespaces')) return;
    throw isolationRefused(name, this.boundary);
  }

  /** What the process entered, once it started. */
  async started(): Promise<PythonBoundary> {
    await this.ensure();
    return this.boundary;
  }

  protected start(): Promise<ChildProcess> {
    const command = pythonCommand(this.options.python, this.options.memoryMb, this.options.pythonRunners);
    const child = takeEarly(pythonKey(command))?.child ?? spawnPython(command);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    const lines = new LineSplitter(MAX_ANSWER_BYTES, () => {
      // An answer larger than allowed: the template's output is too big. Stop the process; the
      // request at the head fails with a limit error.
      child.kill('SIGKILL');
    });
    child.stdout!.on('data', (chunk: Buffer) => lines.push(chunk));
    child.on('exit', (code, signal) => {
      if (this.child === child || this.child === undefined) {
        this.onExit(
          lines.overflowed
            ? `output larger than ${MAX_ANSWER_BYTES / (1024 * 1024)} MB`
            : signal
              ? `signal ${signal}`
              : `exit code ${code}${stderr ? `: ${stderr.trim().split('\n').pop()}` : ''}`,
        );
      }
    });
    return new Promise((resolvePromise, reject) => {
      let ready = false;
      lines.onLine = (line) => {
        let message: unknown;
        try {
          message = JSON.parse(line);
        } catch {
          return;
        }
        if (!ready && (message as { ready?: unknown }).ready) {
          ready = true;
          this.boundary = boundaryOf(message);
          resolvePromise(child);
          return;
        }
        this.onAnswer(message as Answer);
      };
      child.once('error', (e) =>
        reject(
          new DmError(
            'PYTHON_NOT_FOUND',
            `cannot start '${this.options.python}' for Python templates: ${e.message}`,
            {
              category: 'not-found',
              hint:
                (e as NodeJS.ErrnoException).code === 'EACCES' && unprivileged().uid !== undefined
                  ? 'dm runs Python templates as nobody when it runs as root: pass an interpreter nobody may run with --python (docs/expansion.md, "Isolation")'
                  : 'install python3, or pass the interpreter with --python',
            },
          ),
        ),
      );
      child.once('exit', (code) => {
        if (!ready) {
          reject(
            new DmError(
              'SANDBOX_FAILED',
              `the Python renderer exited at start (code ${code}): ${stderr.trim().split('\n').slice(-2).join(' ')}`,
            ),
          );
        }
      });
    });
  }

  protected send(child: ChildProcess, messages: Record<string, unknown>[]): void {
    let lines = '';
    for (const message of messages) lines += `${JSON.stringify(message)}\n`;
    child.stdin!.write(lines);
  }
}

/**
 * The engines a configuration's text names (a file name ending in `.jinja` or `.py`, as its
 * imports and types do): a guess for warm() before the configuration is parsed. Given the
 * configuration's directory, a Python template named there with a `.schema` beside it counts
 * for Jinja too: schemas are validated in the Jinja process (applySchema).
 */
export function enginesNamedIn(text: string, dir?: string): { jinja: boolean; python: boolean } {
  const engines = { jinja: /\.jinja\b/.test(text), python: /\.py\b/.test(text) };
  if (dir !== undefined && engines.python && !engines.jinja) {
    let looked = 0;
    for (const [name] of text.matchAll(/[\w./-]+\.py\b/g)) {
      if (++looked > 64) break;
      if (existsSync(resolve(dir, `${name}.schema`))) {
        engines.jinja = true;
        break;
      }
    }
  }
  return engines;
}

/** Renders templates out of process; one per expansion run. Always `close()` it. */
export class RenderSandbox {
  private readonly options: WorkerOptions;
  private readonly jinjaProcesses: number;
  /** Sent with each Jinja request: whether the process measures it. */
  private readonly timed: Record<string, unknown>;
  private jinja: JinjaWorker[] = [];
  private python: PythonWorker | undefined;
  readonly timings: SandboxTimings = {
    jinjaSchemaMs: 0,
    jinjaRenderMs: 0,
    jinjaYamlMs: 0,
    pythonRunMs: 0,
    pythonEncodeMs: 0,
  };

  private count(engine: 'Jinja' | 'Python', answer: Answer): void {
    if (!answer.ok || !answer.ms) return;
    const [a = 0, b = 0, c = 0] = answer.ms;
    if (engine === 'Jinja') {
      // Rendering, reading the rendering as YAML, checking properties against a schema.
      this.timings.jinjaRenderMs += a;
      this.timings.jinjaYamlMs += b;
      this.timings.jinjaSchemaMs += c;
    } else {
      this.timings.pythonRunMs += a;
      this.timings.pythonEncodeMs += b;
    }
  }

  constructor(options: SandboxOptions = {}) {
    this.options = {
      timeoutMs: options.timeoutMs ?? 10_000,
      memoryMb: options.memoryMb ?? DEFAULT_MEMORY_MB,
      python: options.python ?? DEFAULT_PYTHON,
      pythonIsolation: options.pythonIsolation ?? pythonIsolationFromEnv(),
      ...(options.snapshots !== undefined ? { snapshots: options.snapshots } : {}),
      ...(options.pythonRunners !== undefined ? { pythonRunners: options.pythonRunners } : {}),
    };
    this.jinjaProcesses = Math.max(1, options.jinjaProcesses ?? 1);
    this.timed = options.timings ? { time: true } : {};
  }

  /** The least busy Jinja process; a new one while there are fewer than allowed and all are busy. */
  private jinjaWorker(): JinjaWorker {
    let best = this.jinja[0];
    for (const w of this.jinja) if (best && w.load < best.load) best = w;
    if (!best || (best.load > 0 && this.jinja.length < this.jinjaProcesses)) {
      best = new JinjaWorker('Jinja', this.options);
      this.jinja.push(best);
    }
    return best;
  }

  /**
   * Starts the rendering processes a run will need, side by side, before the first template
   * asks for them (their start-up then overlaps instead of queueing behind each other).
   */
  warm(engines: { jinja?: boolean; python?: boolean }): void {
    if (engines.jinja && this.jinja.length === 0) this.jinjaWorker().warm();
    if (engines.python && !this.python) {
      this.python = new PythonWorker('Python', this.options);
      this.python.warm();
    }
  }

  /** The text a Jinja template renders to. */
  async renderJinja(request: TemplateRequest): Promise<string> {
    const wire = onWire(request);
    const answer = await this.jinjaWorker().request(request.name, wire.request, {
      ...wire.extra,
      ...this.timed,
    });
    this.count('Jinja', answer);
    if (!answer.ok)
      throw failureToError('Jinja', request.name, { ...answer, file: answer.file ?? request.name });
    return answer.text ?? '';
  }

  /** A Jinja template's output parsed as YAML (in the rendering process), bounded in size. */
  async renderJinjaData(
    request: TemplateRequest,
    parse: { source: string; maxNodes: number },
  ): Promise<unknown> {
    return (await this.jinjaData(request, { parse })).data;
  }

  /**
   * A Jinja template's output parsed as YAML, rendered with its properties checked against
   * `request.schema` first, in the same request (docs/expansion.md, "Schemas"): the data, the
   * properties the template saw (defaults filled in) and the violations `warn` mode reports.
   */
  async renderJinjaChecked(
    request: TemplateRequest & { schema: TemplateFile },
    parse: { source: string; maxNodes: number },
    check: SchemaCheck,
  ): Promise<CheckedProperties & { data: unknown }> {
    // A time limit names both: the template or its schema may be what ran too long.
    const label = `${request.name} (checked against its schema ${request.schema.path})`;
    const answer = await this.jinjaData(request, { parse, check }, label);
    return { data: answer.data, ...answer.checked! };
  }

  /**
   * The properties completed by the schema's defaults, and in `warn` mode the violations to
   * report: validated in the Jinja rendering process, under its time and memory limits (a
   * schema is as untrusted as its template; docs/expansion.md, "Isolation"). A violation in
   * `strict` mode, or an invalid schema, is thrown as the DmError schema-validation.ts raised.
   */
  async applySchema(request: SchemaRequest): Promise<CheckedProperties> {
    const name = request.schema.path;
    const answer = await this.jinjaData(
      {
        name,
        source: '',
        context: { properties: request.properties },
        files: NO_FILES,
        schema: request.schema,
      },
      {
        check: {
          subject: request.subject,
          mode: request.mode,
          ...(request.ownFile ? { ownFile: true } : {}),
          only: true,
        },
      },
      `${request.subject}: schema ${name}`,
    );
    return answer.checked!;
  }

  /** One request to a Jinja process: a rendering (parsed or not), a schema check, or both. */
  private async jinjaData(
    request: TemplateRequest,
    extra: { parse?: { source: string; maxNodes: number }; check?: SchemaCheck & { only?: boolean } },
    label = request.name,
  ): Promise<{ data: unknown; checked?: CheckedProperties }> {
    const wire = onWire(request);
    const answer = await this.jinjaWorker().request(label, wire.request, {
      ...wire.extra,
      ...this.timed,
      ...extra,
    });
    this.count('Jinja', answer);
    if (!answer.ok)
      throw failureToError('Jinja', request.name, { ...answer, file: answer.file ?? request.name });
    const checked = extra.check
      ? {
          properties: (answer.propertiesWire ? fromWire(answer.properties) : answer.properties) as Record<
            string,
            unknown
          >,
          violations: answer.violations ?? [],
        }
      : undefined;
    return { data: answerData(answer), ...(checked ? { checked } : {}) };
  }

  /** What a Python template's GenerateConfig returned: YAML text or data. */
  async renderPython(request: TemplateRequest): Promise<PythonResult> {
    this.python ??= new PythonWorker('Python', this.options);
    if (!request.ownFile) await this.python.admit(request.name);
    const wire = onWire(request);
    const answer = await this.python.request(request.name, wire.request, {
      timeout: this.options.timeoutMs / 1000,
    });
    this.count('Python', answer);
    if (!answer.ok) throw failureToError('Python', request.name, answer);
    return answer.text !== undefined ? { text: answer.text } : { data: answerData(answer) };
  }

  /** The boundary the Python process entered (starting it if needed). */
  async pythonBoundary(): Promise<PythonBoundary> {
    this.python ??= new PythonWorker('Python', this.options);
    return this.python.started();
  }

  close(): void {
    for (const worker of this.jinja) worker.shutdown();
    this.python?.shutdown();
  }
}
