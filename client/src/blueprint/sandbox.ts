/**
 * Where blueprint executions render: a Node child process with the permission model (reads only
 * the engine's code; no writes, no child processes, no network-relevant environment), a heap
 * limit and a time limit per template, as the expansion engine's sandbox does
 * (client/src/expand/sandbox/). The child renders with the expansion engine's Jinja plus the
 * blueprint functions (jinja-functions.ts), and validates import and export values against their
 * schemas (schema-validation.ts), under the same limits.
 */
import type { ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DmError } from '../error.js';
import {
  forkRenderer,
  rendererCode,
  sentOnceId,
  sharedRendererModules,
} from '../expand/sandbox/fork-renderer.js';
import { BlueprintError, type Phase } from './errors.js';
import type { SchemaScope } from './schema.js';

export interface BlueprintSandboxOptions {
  /** Per template and per schema validation, default 10 000 ms. */
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

/** A value to validate against a blueprint schema (TemplateRenderer.validate). */
export interface SchemaCheck {
  value: unknown;
  /** The schema as the blueprint wrote it: its references resolve in `scope`, where it is validated. */
  schema: unknown;
  /** One per installation: travels to a rendering process once. */
  scope: SchemaScope;
  /** `import <name>` or `export <name>`: names it in an invalid schema's error. */
  what: string;
}

/**
 * Renders execution templates; `renderValue` gives the native value of one expression;
 * `validate` the violations of a value against its schema (empty when it holds), or throws the
 * `schema` BlueprintError of a schema or reference that cannot be used.
 */
export interface TemplateRenderer {
  renderText(request: RenderRequest): Promise<string>;
  renderValue(request: Omit<RenderRequest, 'source'> & { expression: string }): Promise<unknown>;
  validate(check: SchemaCheck): Promise<string[]>;
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
  /** A schema request's violations. */
  problems?: string[];
  /** kind `blueprint`: the phase of the BlueprintError raised in the process. */
  phase?: Phase;
}

const here = dirname(fileURLToPath(import.meta.url));

export class BlueprintSandbox implements TemplateRenderer {
  private child: ChildProcess | undefined;
  private starting: Promise<ChildProcess> | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, (a: Answer | Error) => void>();
  /** The schema scopes the running process has (it keeps each one it was sent). */
  private sentScopes = new Set<number>();
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
    this.sentScopes = new Set();
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

  /**
   * Sends one request and waits for its answer, at most the time limit. `name` starts the time
   * limit's message (none: the caller names what took too long). A message built per process
   * (`message` a function) leaves out what that process has already.
   */
  private async request(
    message: Record<string, unknown> | (() => Record<string, unknown>),
    name?: string,
  ): Promise<Answer> {
    const child = await this.ensure();
    const id = this.nextId++;
    const answer = await new Promise<Answer | Error>((resolveAnswer) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.kill();
        const took = `took longer than ${this.timeoutMs / 1000}s (time limit)`;
        resolveAnswer(
          new DmError('TEMPLATE_LIMIT', name === undefined ? took : `${name}: ${took}`, {
            category: 'limit',
          }),
        );
      }, this.timeoutMs);
      this.pending.set(id, (a) => {
        clearTimeout(timer);
        resolveAnswer(a);
      });
      child.send({ ...(typeof message === 'function' ? message() : message), id });
    });
    if (answer instanceof Error) throw answer;
    if (!answer.ok && answer.kind === 'blueprint' && answer.phase) {
      throw new BlueprintError(answer.phase, answer.message ?? 'invalid schema');
    }
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

  /**
   * The violations of a value against its schema, validated in the rendering process under the
   * time limit (a schema is as untrusted as its blueprint; docs/blueprints.md, "Sandbox"). A time
   * limit's error names nothing: the caller says which import or export took too long.
   */
  async validate(check: SchemaCheck): Promise<string[]> {
    const id = sentOnceId(check.scope);
    const answer = await this.request(() => {
      const first = !this.sentScopes.has(id);
      this.sentScopes.add(id);
      const { value, schema, what } = check;
      return { schema: { value, schema, what, scopeId: id, ...(first ? { scope: check.scope } : {}) } };
    });
    return answer.problems ?? [];
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
