/**
 * The client of the Deployment Manager service (docs/manager.md): what `dm --manager-url` uses
 * instead of the local deployments database. It sends a configuration with its imports embedded
 * (DM's shape), follows the operation to its end, and reads deployments, manifests and types.
 * Errors come back as the server's `{error: {code, message}}` and become DmErrors with the category
 * of their HTTP status, so the CLI exits as it does locally.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { DmError, relayedError } from '../error.js';
import type { UrlImportLoader } from '../expand/url-imports.js';
import { httpSignal, noAnswer } from '../http-limit.js';
import type { OperationView } from '../wire/manager-api.js';

export interface ManagerClientOptions {
  url: string;
  token?: string | undefined;
  fetch?: typeof fetch;
  /** The HTTP time limit (docs/client.md "Configuration"). */
  timeoutMs?: number | undefined;
}

/** An operation as the service answers it. */
export type OperationJson = OperationView;

export class ManagerClient {
  private readonly base: string;

  constructor(private readonly options: ManagerClientOptions) {
    this.base = options.url.replace(/\/+$/, '');
  }

  /** MANAGER_UNREACHABLE: no answer, or the connection lost in the middle of one. */
  private unreachable(error: unknown) {
    return noAnswer('MANAGER_UNREACHABLE', `the Deployment Manager at ${this.base}`, error, {
      timeoutMs: this.options.timeoutMs,
      hint: 'check --manager-url (or managerUrl in the config file)',
      ...(this.base.startsWith('https:')
        ? { tlsHint: 'a server that speaks plain HTTP is named http://… in --manager-url' }
        : {}),
    });
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await (this.options.fetch ?? fetch)(`${this.base}${path}`, {
        method,
        headers: {
          accept: 'application/json',
          ...(this.options.token ? { authorization: `Bearer ${this.options.token}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: httpSignal(this.options.timeoutMs),
      });
    } catch (error) {
      throw this.unreachable(error);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (error) {
      // The connection lost or timed out in the middle of the answer: as one that never answered.
      throw this.unreachable(error);
    }
    let data: unknown;
    try {
      data = text === '' ? undefined : JSON.parse(text);
    } catch {
      throw new DmError(
        'MANAGER_BAD_ANSWER',
        `${method} ${path}: the Deployment Manager answered ${res.status} with no JSON`,
        {
          category: 'unreachable',
        },
      );
    }
    if (!res.ok) {
      const e = (data as { error?: { code?: string; message?: string; hint?: string } } | undefined)?.error;
      throw relayedError(res.status, e, (message) =>
        e?.message === undefined ? `${method} ${path} answered ${res.status}` : message,
      );
    }
    return data as T;
  }

  /**
   * Follows an operation until it has finished; `onProgress` sees every answer. Each request holds
   * until the operation ends or a second passes (`?wait=1`, docs/manager.md), so the end is seen at
   * once and progress about every second; a server that answers at once is polled with a backoff.
   */
  async follow(id: string, onProgress?: (op: OperationJson) => void): Promise<OperationJson> {
    for (let delay = 100; ; delay = Math.min(delay * 2, 1000)) {
      const asked = performance.now();
      const op = await this.request<OperationJson>(
        'GET',
        `/api/v1/operations/${encodeURIComponent(id)}?wait=1`,
      );
      onProgress?.(op);
      if (op.status !== 'pending' && op.status !== 'running') return op;
      const held = performance.now() - asked;
      if (held < delay) await new Promise((r) => setTimeout(r, delay - held));
    }
  }
}

const TEMPLATE_FILE = /\.(jinja|py)$/;

function safeRelative(name: string, where: string): string {
  if (name.startsWith('/') || name.split(/[\\/]/).includes('..')) {
    throw new DmError(
      'IMPORT_OUTSIDE',
      `${where}: import '${name}' is outside the configuration's directory`,
      {
        category: 'invalid-input',
        hint: 'the Deployment Manager takes imports relative to the configuration',
      },
    );
  }
  return name;
}

/** Where `configurationPayload` finds what a configuration imports beyond its own directory. */
export interface PayloadOptions {
  /** `--imports-dir`: a second place where types and imports are found. */
  importsDir?: string | undefined;
  /** Loads an import given by URL (the resolver chain: dm.lock, the cache, then the network). */
  loadUrl?: UrlImportLoader | undefined;
}

/**
 * What `dm deploy ARG` sends to the service: the configuration text and its imports (DM's
 * shape). A template file becomes a one-resource configuration importing it; a registry reference
 * a one-resource configuration naming it (the server resolves it); a configuration brings every
 * file the local expansion reads, as gcloud's import list did: its `imports:`, its top-level types
 * found beside it or in `--imports-dir`, their schemas, and the schemas' imports, recursively —
 * imports by URL fetched here (locked and cached as `dm expand` does) and sent under their names,
 * since the service never fetches a URL (docs/manager.md, "Imports").
 */
export async function configurationPayload(
  arg: string,
  deployment: string,
  options: PayloadOptions = {},
): Promise<{ content: string; imports: { name: string; content: string }[] }> {
  const one = (type: string) =>
    `resources:\n- name: ${JSON.stringify(deployment)}\n  type: ${JSON.stringify(type)}\n`;
  if (!existsSync(arg)) {
    if (!/[:/]/.test(arg)) {
      throw new DmError('FILE_NOT_FOUND', `'${arg}' is neither a file nor a template reference`, {
        category: 'not-found',
      });
    }
    return { content: one(arg), imports: [] };
  }
  if (statSync(arg).isDirectory()) {
    throw new DmError(
      'NOT_SUPPORTED',
      `${arg} is a directory; with --manager-url deploy a configuration file`,
      {
        category: 'usage',
        hint: 'dm render the directory into one file first',
      },
    );
  }
  const template = TEMPLATE_FILE.test(arg);
  const text = template ? one(basename(arg)) : readFileSync(arg, 'utf8');
  let parsed: { imports: { path: string; name: string }[]; resources?: { type?: unknown }[] };
  if (template) {
    parsed = { imports: [], resources: [{ type: basename(arg) }] };
  } else {
    // Refused here as locally (nothing to deploy, a mistyped top-level key), naming the user's file.
    const { checkConfigurationDocuments } = await import('./input.js');
    const { parseYamlDocuments } = await import('../document/yaml.js');
    checkConfigurationDocuments(
      parseYamlDocuments(text, { source: arg }).filter((d) => d !== null && d !== undefined),
      arg,
    );
    try {
      const { parseConfiguration } = await import('../expand/index.js');
      parsed = parseConfiguration(text, arg) as unknown as typeof parsed;
    } catch (error) {
      // Not a configuration (Kubernetes objects, layered documents): sent as it is, without imports.
      if (error instanceof DmError && error.code === 'IMPORT_OUTSIDE') throw error;
      return { content: text, imports: [] };
    }
  }
  const { LocalTemplateSource, templateKindOf } = await import('../expand/local-template-source.js');
  const source = new LocalTemplateSource({
    baseDir: dirname(arg),
    ...(options.importsDir ? { importsDir: options.importsDir } : {}),
    imports: parsed.imports,
    configuration: arg,
    ...(options.loadUrl ? { loadUrl: options.loadUrl } : {}),
  });
  await source.ready();
  for (const r of parsed.resources ?? []) {
    if (typeof r.type === 'string' && !r.type.includes(':')) await source.load(r.type);
  }
  // Every template of the import set brings its schema and the schema's imports.
  for (let size = -1; size !== source.files.size; ) {
    size = source.files.size;
    for (const name of [...source.files.keys()]) {
      if (templateKindOf(name) && !name.includes(':')) await source.load(name);
    }
  }
  return {
    content: text,
    imports: [...source.files.values()].map((f) => ({ name: safeRelative(f.name, arg), content: f.content })),
  };
}
