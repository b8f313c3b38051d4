/**
 * Starting a Node rendering process under the permission model — the one way the expansion
 * engine's Jinja process and the blueprint renderer are started: reads allowed only where the
 * renderer's own code lives, no writes, no child processes, an empty environment (nothing of dm's
 * tokens or configuration reaches templates), a heap limit, and a ready handshake over IPC.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DmError } from '../../error.js';
import { RENDERER_WARM_ARG } from './render-protocol.js';

/**
 * Defined only in the CLI bundle (scripts/bundle.mjs; docs/client.md, "The CLI bundle"):
 * where the renderers' own bundles are, relative to the CLI's modules.
 */
declare const DM_RENDERER_BUNDLES: string | undefined;
/** Defined only in the CLI bundle too: the digest of each renderer's bundle file (its snapshot's key). */
declare const DM_RENDERER_DIGESTS: Record<string, string> | undefined;

/** Node 20's flag; Node ≥ 22.13 spells it without `experimental`. */
export function permissionFlag(): string {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 13) ? '--permission' : '--experimental-permission';
}

/**
 * The modules of dm's client (`clientSrc`: the compiled client/src) that every renderer loads from
 * outside its own directory: the YAML reader (with its fast path) and writer, JSON Schema
 * validation (templates' schemas are validated where templates run), the Python value leaf,
 * errors. One list, so a module added to these is readable by both renderers.
 */
export function sharedRendererModules(clientSrc: string): string[] {
  return [
    join(clientSrc, 'document', 'yaml.js'),
    join(clientSrc, 'document', 'simple-yaml.js'),
    join(clientSrc, 'document', 'json-schema.js'),
    join(clientSrc, 'document', 'json-schema-meta.js'),
    join(clientSrc, 'data.js'),
    join(clientSrc, 'python', 'values.js'),
    join(clientSrc, 'python', 'escapes.js'),
    join(clientSrc, 'error.js'),
    join(clientSrc, 'error-codes.js'),
  ];
}

/** A renderer's entry module and what its process may read. */
export interface RendererCode {
  /** The child's entry module (compiled .js). */
  entry: string;
  /** Directories the child may read, with everything below them. */
  readTrees: readonly string[];
  /** Single files the child may read. */
  readFiles: readonly string[];
  /** The digest of the entry, when it is a bundle file (what a startup snapshot of it is keyed by). */
  digest?: string;
}

/**
 * The V8 flags of a renderer: its heap limit and stack; started from a startup snapshot, V8 also
 * checks the snapshot's checksum (a damaged file stops the process at start). A snapshot is built
 * with the same ones (snapshot-builder.ts): Node 20 refuses one built with other V8 flags.
 */
export function rendererV8Flags(memoryMb: number, snapshot: boolean): string[] {
  return [
    `--max-old-space-size=${memoryMb}`,
    '--stack-size=2000',
    ...(snapshot ? ['--verify-snapshot-checksum'] : []),
  ];
}

/**
 * Where a renderer's code is: run from the CLI bundle, one file (`<name>.cjs`, the renderer and
 * every module it uses) that is all the process may read; otherwise the compiled modules that
 * `unbundled` names (the registry server, tests).
 */
export function rendererCode(
  name: 'jinja-child' | 'blueprint-child',
  unbundled: () => RendererCode,
): RendererCode {
  if (typeof DM_RENDERER_BUNDLES !== 'string') return unbundled();
  const entry = join(dirname(fileURLToPath(import.meta.url)), DM_RENDERER_BUNDLES, `${name}.cjs`);
  const digest = typeof DM_RENDERER_DIGESTS === 'object' ? DM_RENDERER_DIGESTS[name] : undefined;
  return { entry, readTrees: [], readFiles: [entry], ...(digest ? { digest } : {}) };
}

const sentIds = new WeakMap<object, number>();
let nextSentId = 1;

/**
 * The number naming an object that travels to rendering processes once (a file set, a schema, a
 * blueprint's schema scope): the same for the same object, so that a process that has it already
 * is sent the number alone.
 */
export function sentOnceId(object: object): number {
  let id = sentIds.get(object);
  if (id === undefined) {
    id = nextSentId++;
    sentIds.set(object, id);
  }
  return id;
}

export interface ForkRendererOptions extends RendererCode {
  memoryMb: number;
  /** For messages: "the Jinja renderer". */
  label: string;
  /**
   * A startup snapshot of the entry to start from (renderer-snapshot.ts), made from the bundle
   * whose digest is `digest`: the process must say that digest when it is ready, or it is not
   * taken.
   */
  snapshot?: string;
  /**
   * The Jinja renderer serves a warm-up of its own before it says it is ready (renderer-warm-up.ts;
   * render-sandbox.ts, startRenderersEarly).
   */
  warm?: boolean;
}

export interface ForkedRenderer {
  child: ChildProcess;
  /** Resolves once the child said it is ready; rejects with SANDBOX_FAILED if it could not start. */
  ready: Promise<ChildProcess>;
  /** The end of what the child wrote on stderr. */
  stderrTail(): string;
  /** Whether the child died of its heap limit. */
  outOfMemory(): boolean;
}

export function forkRenderer(options: ForkRendererOptions): ForkedRenderer {
  // `dir/*` is Node 20's spelling of "this directory and below"; later versions take `dir`.
  const tree = (dir: string) => (permissionFlag() === '--permission' ? dir : `${dir}/*`);
  const reads = [...options.readTrees.map(tree), ...options.readFiles];
  const child = spawn(
    process.execPath,
    [
      permissionFlag(),
      ...reads.map((r) => `--allow-fs-read=${r}`),
      ...rendererV8Flags(options.memoryMb, options.snapshot !== undefined),
      '--no-warnings',
      ...(options.snapshot ? ['--snapshot-blob', options.snapshot] : [options.entry]),
      ...(options.warm ? [RENDERER_WARM_ARG] : []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced', env: {} },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  const ready = new Promise<ChildProcess>((resolve, reject) => {
    const onMessage = (m: unknown) => {
      const ready = m as { ready?: unknown; snapshot?: unknown };
      if (!ready.ready) return;
      child.off('message', onMessage);
      if (options.snapshot && (!options.digest || ready.snapshot !== options.digest)) {
        child.kill('SIGKILL');
        reject(new DmError('SANDBOX_FAILED', `${options.label} started from a snapshot of another build`));
      } else resolve(child);
    };
    child.on('message', onMessage);
    child.once('error', (e) =>
      reject(new DmError('SANDBOX_FAILED', `cannot start ${options.label}: ${e.message}`)),
    );
    // Gone before it said it is ready, whatever its exit code (after that, this does nothing).
    child.once('exit', (code, signal) => {
      const said = stderr.trim().split('\n').slice(-3).join(' ');
      reject(
        new DmError(
          'SANDBOX_FAILED',
          `${options.label} exited at start (${signal ? `signal ${signal}` : `code ${code}`})${said ? `: ${said}` : ''}`,
        ),
      );
    });
  });
  return {
    child,
    ready,
    stderrTail: () => stderr,
    outOfMemory: () => /heap out of memory|Allocation failed/.test(stderr),
  };
}
