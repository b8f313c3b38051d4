/**
 * Where untrusted templates run (spec/expansion.md §7): outside the main process, with a time
 * limit per template and a memory limit per process.
 *
 * - Jinja: a Node child process started with the permission model (`--experimental-permission`,
 *   reading only the engine's own code; no writes, no child processes, no workers, no addons) and
 *   a V8 heap limit; requests over the IPC channel.
 * - Python: one `python3 -I` process per sandbox (that is, per expansion run), JSON lines over
 *   stdio, an address-space limit and audit hooks (python/runner-source.ts).
 *
 * A template that runs out of time or memory kills only its process: the sandbox reports a
 * DmError with category `limit` and starts a fresh process for the next template.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DmError } from '../../error.js';
import { PYTHON_RUNNER_SOURCE } from '../python/runner-source.js';

export interface SandboxOptions {
  /** Per template, default 10 000 ms. */
  timeoutMs?: number;
  /** Per rendering process, default 512 MB. */
  memoryMb?: number;
  /** The Python interpreter, default `python3`. */
  python?: string;
}

export interface TemplateRequest {
  /** Template name (import name, reference or path), used in errors. */
  name: string;
  source: string;
  context: Record<string, unknown>;
  /** Files reachable by include/import, by import name. */
  files: Record<string, string>;
}

export type PythonResult = { text: string } | { data: unknown };

interface Failure {
  ok: false;
  kind: 'error' | 'compile' | 'runtime' | 'blocked' | 'limit';
  message: string;
  file?: string | null;
  line?: number | null;
}

type Answer = ({ ok: true; text?: string; data?: unknown } | Failure) & { id: number };

interface Pending {
  resolve: (answer: Answer) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
  name: string;
}

const here = dirname(fileURLToPath(import.meta.url));

function failureToError(engine: 'Jinja' | 'Python', name: string, f: Failure): DmError {
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

/** One rendering process speaking request/answer messages, restarted after it dies. */
abstract class Worker {
  protected child: ChildProcess | undefined;
  protected pending = new Map<number, Pending>();
  private nextId = 1;
  private starting: Promise<void> | undefined;

  constructor(
    protected readonly engine: 'Jinja' | 'Python',
    protected readonly options: Required<SandboxOptions>,
  ) {}

  protected abstract start(): Promise<ChildProcess>;
  protected abstract send(child: ChildProcess, message: Record<string, unknown>): void;

  protected onAnswer(answer: Answer): void {
    const p = this.pending.get(answer.id);
    if (!p) return;
    this.pending.delete(answer.id);
    clearTimeout(p.timer);
    p.resolve(answer);
  }

  protected onExit(reason: string): void {
    this.child = undefined;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      const outOfMemory = /memory|SIGABRT|SIGKILL|SIGSEGV|code 134/.test(reason);
      p.reject(
        new DmError(
          'TEMPLATE_LIMIT',
          `${p.name}: limit: the ${this.engine} renderer stopped (${reason})${outOfMemory ? `; memory limit ${this.options.memoryMb} MB` : ''}`,
          { category: 'limit', details: { template: p.name } },
        ),
      );
    }
  }

  private async ensure(): Promise<ChildProcess> {
    if (this.child) return this.child;
    if (!this.starting) {
      this.starting = this.start().then((child) => {
        this.child = child;
        this.starting = undefined;
      });
      this.starting.catch(() => {
        this.starting = undefined;
      });
    }
    await this.starting;
    if (!this.child) throw new DmError('SANDBOX_FAILED', `the ${this.engine} renderer did not start`);
    return this.child;
  }

  async request(name: string, message: Record<string, unknown>): Promise<Answer> {
    const child = await this.ensure();
    const id = this.nextId++;
    return new Promise<Answer>((resolvePromise, reject) => {
      const timer = setTimeout(
        () => {
          this.pending.delete(id);
          reject(
            new DmError(
              'TEMPLATE_LIMIT',
              `${name}: limit: took longer than ${this.options.timeoutMs / 1000}s (time limit)`,
              {
                category: 'limit',
                details: { template: name, timeoutMs: this.options.timeoutMs },
              },
            ),
          );
          this.kill();
        },
        this.options.timeoutMs + (this.engine === 'Python' ? 1000 : 0),
      );
      this.pending.set(id, { resolve: resolvePromise, reject, timer, name });
      try {
        this.send(child, { ...message, id });
      } catch (error) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(error as Error);
      }
    });
  }

  kill(): void {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null) child.kill('SIGKILL');
  }
}

class JinjaWorker extends Worker {
  protected start(): Promise<ChildProcess> {
    const entry = join(here, 'jinja-child.js');
    const expandDir = resolve(here, '..');
    const nunjucksDir = dirname(fileURLToPath(import.meta.resolve('nunjucks/package.json')));
    const nodeModules = dirname(nunjucksDir);
    const packageRoot = resolve(here, '../../../../..');
    const reads = [`${expandDir}/*`, `${nodeModules}/*`, join(packageRoot, 'package.json')];
    const child = fork(entry, [], {
      execArgv: [
        '--experimental-permission',
        ...reads.map((r) => `--allow-fs-read=${r}`),
        `--max-old-space-size=${this.options.memoryMb}`,
        '--stack-size=2000',
        '--no-warnings',
      ],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    child.on('message', (m: unknown) => {
      if ((m as { id?: unknown }).id !== undefined) this.onAnswer(m as Answer);
    });
    child.on('exit', (code, signal) => {
      if (this.child === child || this.child === undefined) {
        const oom = /heap out of memory|Allocation failed/.test(stderr);
        this.onExit(oom ? 'out of memory' : signal ? `signal ${signal}` : `exit code ${code}`);
      }
    });
    return new Promise((resolvePromise, reject) => {
      const onMessage = (m: unknown) => {
        if ((m as { ready?: unknown }).ready) {
          child.off('message', onMessage);
          resolvePromise(child);
        }
      };
      child.on('message', onMessage);
      child.once('error', (e) =>
        reject(new DmError('SANDBOX_FAILED', `cannot start the Jinja renderer: ${e.message}`)),
      );
      child.once('exit', (code) => {
        if (code !== 0)
          reject(
            new DmError(
              'SANDBOX_FAILED',
              `the Jinja renderer exited at start: ${stderr.trim().split('\n').slice(-3).join(' ')}`,
            ),
          );
      });
    });
  }

  protected send(child: ChildProcess, message: Record<string, unknown>): void {
    child.send(message);
  }
}

class PythonWorker extends Worker {
  protected start(): Promise<ChildProcess> {
    const child = spawn(
      this.options.python,
      ['-I', '-c', PYTHON_RUNNER_SOURCE, String(this.options.memoryMb)],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
      },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    const lines = createInterface({ input: child.stdout! });
    child.on('exit', (code, signal) => {
      if (this.child === child || this.child === undefined) {
        this.onExit(
          signal
            ? `signal ${signal}`
            : `exit code ${code}${stderr ? `: ${stderr.trim().split('\n').pop()}` : ''}`,
        );
      }
    });
    return new Promise((resolvePromise, reject) => {
      let ready = false;
      lines.on('line', (line) => {
        let message: unknown;
        try {
          message = JSON.parse(line);
        } catch {
          return;
        }
        if (!ready && (message as { ready?: unknown }).ready) {
          ready = true;
          resolvePromise(child);
          return;
        }
        this.onAnswer(message as Answer);
      });
      child.once('error', (e) =>
        reject(
          new DmError(
            'PYTHON_NOT_FOUND',
            `cannot start '${this.options.python}' for Python templates: ${e.message}`,
            {
              category: 'not-found',
              hint: 'install python3, or pass the interpreter with --python',
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

  protected send(child: ChildProcess, message: Record<string, unknown>): void {
    child.stdin!.write(`${JSON.stringify(message)}\n`);
  }
}

/** Renders templates out of process; one per expansion run. Always `close()` it. */
export class RenderSandbox {
  private readonly options: Required<SandboxOptions>;
  private jinja: JinjaWorker | undefined;
  private python: PythonWorker | undefined;

  constructor(options: SandboxOptions = {}) {
    this.options = {
      timeoutMs: options.timeoutMs ?? 10_000,
      memoryMb: options.memoryMb ?? 512,
      python: options.python ?? 'python3',
    };
  }

  /** The text a Jinja template renders to. */
  async renderJinja(request: TemplateRequest): Promise<string> {
    this.jinja ??= new JinjaWorker('Jinja', this.options);
    const answer = await this.jinja.request(request.name, { ...request });
    if (!answer.ok)
      throw failureToError('Jinja', request.name, { ...answer, file: answer.file ?? request.name });
    return answer.text ?? '';
  }

  /** What a Python template's GenerateConfig returned: YAML text or data. */
  async renderPython(request: TemplateRequest): Promise<PythonResult> {
    this.python ??= new PythonWorker('Python', this.options);
    const answer = await this.python.request(request.name, {
      ...request,
      timeout: this.options.timeoutMs / 1000,
    });
    if (!answer.ok) throw failureToError('Python', request.name, answer);
    return answer.text !== undefined ? { text: answer.text } : { data: answer.data };
  }

  close(): void {
    this.jinja?.kill();
    this.python?.kill();
  }
}
