/**
 * The resolver contract (pnpm's shape). The chain itself — its one order — is built in
 * build-chain.ts and documented in docs/client.md "The resolver chain". Each resolver answers a batch of references with, per
 * reference, a resolution, an error it owns (e.g. VERSION_NOT_FOUND from the registry that holds
 * the template), or `null` for "not mine". Only the chain's end throws for references nobody took.
 */
import { DmError } from '../error.js';
import {
  formatReference,
  type Reference,
  type RegistryReference,
  type UrlReference,
} from '../reference/reference.js';
import type { ResolvedFile, ResolvedVersion } from './types.js';

export type Resolution = ResolvedVersion | DmError | Declined | null;

/**
 * "Not mine", with a sentence worth telling the user if nobody else takes the reference either
 * (e.g. "the registry server at URL does not host github.com/acme/templates"): the chain goes on,
 * and a failure of that reference later in the chain carries the sentence in its hint.
 */
export class Declined {
  constructor(readonly note: string) {}
}

export interface Resolver {
  /** Shown in errors and `--verbose` output, e.g. `lock file`, `registry server http://…`. */
  readonly name: string;
  /** Answers each reference, in order. */
  resolve(refs: readonly RegistryReference[]): Promise<Resolution[]>;
  /** Answers plain URL references, in order (the lock file, the chain's end); absent: none are mine. */
  resolveUrls?(refs: readonly UrlReference[]): Promise<Resolution[]>;
  /** Every version name of a template (for `dm versions`, `dm outdated`); null when not mine. */
  versions?(template: RegistryReference): Promise<string[] | null>;
  /** A file's bytes; null when this resolver cannot fetch it. */
  fetchFile?(resolved: ResolvedVersion, file: ResolvedFile): Promise<Buffer | null>;
  /**
   * Whether `oci://` references may be asked of it (docs/oci.md "References"): only resolvers that
   * know OCI, or answer by the reference's whole text (the lock file, the cache), are.
   */
  readonly acceptsOci?: boolean;
}

/** Whether the chain asks `resolver` about `ref` (a git registry's resolvers never see `oci://` references). */
export function asks(resolver: Resolver, ref: Reference): boolean {
  return ref.kind !== 'registry' || ref.scheme !== 'oci' || resolver.acceptsOci === true;
}

export interface ChainResult {
  resolved: ResolvedVersion[];
  /** Which resolver answered each reference (by index). */
  answeredBy: string[];
}

/**
 * Resolves every reference through the chain. All failures are reported together in one error
 * (the first failure's code and category; details list each reference's problem).
 */
export async function resolveThroughChain(
  chain: readonly Resolver[],
  refs: readonly Reference[],
): Promise<ChainResult> {
  const resolved: (ResolvedVersion | undefined)[] = refs.map(() => undefined);
  const answeredBy: string[] = refs.map(() => '');
  const failures = new Map<number, DmError>();
  const notes = new Map<number, string[]>();
  let pending = refs.map((_, i) => i);
  for (const resolver of chain) {
    if (pending.length === 0) break;
    const registry: [number, RegistryReference][] = [];
    const urls: [number, UrlReference][] = [];
    for (const index of pending) {
      const ref = refs[index]!;
      if (!asks(resolver, ref)) continue;
      if (ref.kind === 'url') urls.push([index, ref]);
      else registry.push([index, ref]);
    }
    const [forRegistry, forUrls] = await Promise.all([
      registry.length > 0 ? resolver.resolve(registry.map(([, ref]) => ref)) : [],
      urls.length > 0 && resolver.resolveUrls ? resolver.resolveUrls(urls.map(([, ref]) => ref)) : [],
    ]);
    const answers = new Map<number, Resolution>([
      ...registry.map(([index], k): [number, Resolution] => [index, forRegistry[k] ?? null]),
      ...urls.map(([index], k): [number, Resolution] => [index, forUrls[k] ?? null]),
    ]);
    const still: number[] = [];
    for (const index of pending) {
      const answer = answers.get(index) ?? null;
      if (answer === null) still.push(index);
      else if (answer instanceof Declined) {
        still.push(index);
        notes.set(index, [...(notes.get(index) ?? []), answer.note]);
      } else if (answer instanceof DmError) failures.set(index, answer);
      else {
        resolved[index] = answer;
        answeredBy[index] = resolver.name;
      }
    }
    pending = still;
  }
  for (const index of pending) failures.set(index, notTaken(chain, refs[index]!));
  for (const [index, said] of notes) {
    const failure = failures.get(index);
    if (failure) failures.set(index, withNotes(failure, said));
  }
  if (failures.size > 0) {
    const sorted = [...failures.entries()].sort(([a], [b]) => a - b);
    const [, first] = sorted[0]!;
    const message =
      sorted.length === 1
        ? first.message
        : `${sorted.length} references failed to resolve: ${sorted.map(([, e]) => e.message).join('; ')}`;
    throw new DmError(first.code, message, {
      category: first.category,
      ...(first.hint ? { hint: first.hint } : {}),
      details: {
        ...(sorted.length === 1 ? first.details : {}),
        failures: sorted.map(([i, e]) => ({
          reference: formatReference(refs[i]!),
          code: e.code,
          message: e.message,
        })),
      },
    });
  }
  return { resolved: resolved as ResolvedVersion[], answeredBy };
}

/** A failure with what earlier resolvers said when they passed the reference on, first. */
function withNotes(error: DmError, notes: readonly string[]): DmError {
  const hint = [...notes, ...(error.hint ? [error.hint] : [])].join('; ');
  return new DmError(error.code, error.message, {
    category: error.category,
    hint,
    ...(error.details ? { details: error.details } : {}),
  });
}

/** The chain's end for a reference nobody took (only a chain without an end leaves any). */
function notTaken(chain: readonly Resolver[], ref: Reference): DmError {
  if (ref.kind === 'url') {
    return new DmError('URL_NOT_FETCHED', `${ref.url} is a plain URL, and nothing here fetches URLs`, {
      category: 'unreachable',
      hint: 'use a registry reference, or run dm install where URLs may be fetched',
    });
  }
  const unknownHost = ref.host !== 'github.com';
  return new DmError(
    unknownHost ? 'UNKNOWN_HOST' : 'REGISTRY_NOT_FOUND',
    unknownHost
      ? `${formatReference(ref)} names the host ${ref.host}, which is not configured (dm does not guess what a host serves)`
      : `no configured source serves the registry of ${formatReference(ref)} (tried: ${chain.map((r) => r.name).join(', ') || 'none'})`,
    {
      category: 'not-found',
      hint: `pass --registry-url, --registry-dir, or configure ${ref.host} under registries: in the config file`,
    },
  );
}

/** A file's bytes from the first resolver that can fetch it. */
export async function fetchThroughChain(
  chain: readonly Resolver[],
  resolved: ResolvedVersion,
  file: ResolvedFile,
): Promise<Buffer> {
  const oci = resolved.template.startsWith('oci://');
  for (const resolver of chain) {
    if (oci && !resolver.acceptsOci) continue;
    const data = await resolver.fetchFile?.(resolved, file);
    if (data) return data;
  }
  throw new DmError(
    'CONTENT_NOT_FOUND',
    `no source could fetch ${file.path} of ${resolved.template}:${resolved.version} (sha256 ${file.sha256})`,
    { category: 'not-found' },
  );
}
