/**
 * Where blueprint executions render: a Node child process with the permission model (reads only
 * the engine's code; no writes, no child processes, no network-relevant environment), a heap
 * limit and a time limit per template, as the expansion engine's sandbox does
 * (client/src/expand/sandbox/). The child renders with the expansion engine's Jinja plus the
 * blueprint functions (jinja-functions.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DmError } from '../error.js';
import { forkRenderer, rendererCode, sharedRendererModules } from '../expand/sandbox/fork-renderer.js';

export interface BlueprintSandboxOptions {
  /** Per template, default 10 000 ms. */
  timeoutMs?: number;
  /** Heap of the rendering process, default 512 MB. */
  memoryMb?: number;
}

export interface RenderRequest {
  /** Names the template in errors (`<installation path>/<execution>`). */
  name: string;
  source: string;
  context: Record<string, unknown>;
  /** Files `{% include %}` can reach (the blueprint's filesystem). */
  files: Record<string, string>;
}

/** A template failure: `templateFunction` when a blueprint function (getResource…) failed. */
export class TemplateFailure extends Error {
  constructor(
    message: string,
    readonly kind: string,
    readonly line: number | undefined,
    readonly templateFunction: boolean,
  ) {
    super(message);
    this.name = 'TemplateFailure';
  }
}

/** Renders execution templates; `renderValue` gives the native value of one expression. */
export interface TemplateRenderer {
  renderText(request: RenderRequest): Promise<string>;
  renderValue(request: Omit<RenderRequest, 'source'> & { expression: string }): Promise<unknown>;
  close(): void;
}

interface Answer {
  id: number;
  ok: boolean;
  text?: string;
  data?: unknown;
  kind?: string;
  message?: string;
  line?: number | null;
  templateFunction?: boolean;
}

const here = dirname(fileURLToPath(import.meta.url));

export class BlueprintSandbox implements TemplateRenderer {
  private child: ChildProcess | undefined;
  private starting: Promise<ChildProcess> | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, (a: Answer | Error) => void>();
  private readonly timeoutMs: number;
  private readonly memoryMb: number;

  constructor(options: BlueprintSandboxOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.memoryMb = options.memoryMb ?? 512;
  }

  private start(): Promise<ChildProcess> {
    const code = rendererCode('blueprint-child', () => {
      const srcDir = resolve(here, '..');
      const nunjucksDir = dirname(fileURLToPath(import.meta.resolve('nunjucks/package.json')));
      return {
        entry: join(here, 'sandbox-child.js'),
        readTrees: [here, join(srcDir, 'expand'), dirname(nunjucksDir)],
        readFiles: [...sharedRendererModules(srcDir), join(resolve(here, '../../../..'), 'package.json')],
      };
    });
    const { child, ready, outOfMemory } = forkRenderer({
      ...code,
      memoryMb: this.memoryMb,
      label: 'the blueprint renderer',
    });
    child.on('message', (m: unknown) => {
      const answer = m as Answer;
      if (answer.id === undefined) return;
      const done = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      done?.(answer);
    });
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = undefined;
      const reason = outOfMemory()
        ? `out of memory (limit ${this.memoryMb} MB)`
        : signal
          ? `signal ${signal}`
          : `exit code ${code}`;
      for (const [id, done] of this.pending) {
        this.pending.delete(id);
        done(
          new DmError('TEMPLATE_LIMIT', `the blueprint renderer stopped (${reason})`, { category: 'limit' }),
        );
      }
    });
    return ready;
  }

  private async ensure(): Promise<ChildProcess> {
    if (this.child) return this.child;
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    this.child = await this.starting;
    return this.child;
  }

  private async request(message: Record<string, unknown>, name: string): Promise<Answer> {
    const child = await this.ensure();
    const id = this.nextId++;
    const answer = await new Promise<Answer | Error>((resolveAnswer) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.kill();
        resolveAnswer(
          new DmError('TEMPLATE_LIMIT', `${name}: took longer than ${this.timeoutMs / 1000}s (time limit)`, {
            category: 'limit',
          }),
        );
      }, this.timeoutMs);
      this.pending.set(id, (a) => {
        clearTimeout(timer);
        resolveAnswer(a);
      });
      child.send({ ...message, id });
    });
    if (answer instanceof Error) throw answer;
    if (!answer.ok) {
      throw new TemplateFailure(
        answer.message ?? 'template failed',
        answer.kind ?? 'runtime',
        answer.line ?? undefined,
        answer.templateFunction === true,
      );
    }
    return answer;
  }

  async renderText(request: RenderRequest): Promise<string> {
    const answer = await this.request({ ...request }, request.name);
    return answer.text ?? '';
  }

  async renderValue(request: Omit<RenderRequest, 'source'> & { expression: string }): Promise<unknown> {
    const { expression, ...rest } = request;
    const answer = await this.request(
      { ...rest, source: `{{ (${expression}) | __dm_capture }}`, capture: true },
      request.name,
    );
    return answer.data;
  }

  private kill(): void {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null) child.kill('SIGKILL');
  }

  close(): void {
    this.kill();
  }
}
