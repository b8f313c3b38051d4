/** `dm resolve` and `dm versions`: references in, exact versions and digests out. */
import type { DmConfig } from '../config/config.js';
import { DmError } from '../error.js';
import { admits, formatVersionRequest, pickVersion } from '../reference/pick-version.js';
import {
  type DefaultRegistry,
  formatTemplateName,
  parseReference,
  type RegistryReference,
} from '../reference/reference.js';
import { newestFirst } from '../reference/version.js';
import { buildResolverChain } from './build-chain.js';
import { asks, resolveThroughChain } from './resolver.js';
import { pinnedReference, type ResolvedVersion } from './types.js';

export interface ResolveOptions {
  config: DmConfig;
  registryDirs?: readonly string[];
  /** Warnings (a version the registry server reports quarantined). */
  warn?: (message: string) => void;
}

export interface ResolveResult extends ResolvedVersion {
  /** The exact pin, e.g. `github.com/o/r/redis:=v1.0.3`. */
  pinned: string;
}

function parseRegistryReference(
  text: string,
  defaultRegistry: DefaultRegistry | undefined,
  allowMissingVersion: boolean,
): RegistryReference {
  const ref = parseReference(text, { defaultRegistry, allowMissingVersion });
  if (ref.kind !== 'registry') {
    throw new DmError(
      'URL_REFERENCE_NOT_SUPPORTED',
      `'${text}' is a plain URL; dm resolve takes registry references`,
      {
        category: 'usage',
      },
    );
  }
  return ref;
}

export async function resolveReferences(
  texts: readonly string[],
  options: ResolveOptions,
): Promise<ResolveResult[]> {
  const setup = await buildResolverChain({
    config: options.config,
    registryDirs: options.registryDirs,
    ...(options.warn ? { onWarning: options.warn } : {}),
  });
  const parsed = texts.map((t) =>
    parseReference(t, { defaultRegistry: setup.defaultRegistry, allowMissingVersion: true }),
  );
  // Plain URLs too: the chain's end fetches them (no version: pinned by digest), or, offline,
  // answers OFFLINE_MISSING as for any reference nobody took.
  const { resolved } = await resolveThroughChain(setup.chain, parsed);
  return resolved.map((r) => ({
    ...r,
    pinned: r.version ? pinnedReference(r) : `${r.template}@${r.digest}`,
  }));
}

export async function listVersions(
  text: string,
  options: ResolveOptions,
): Promise<{ template: string; versions: string[]; requested?: string; resolvesTo?: string }> {
  const setup = await buildResolverChain({ config: options.config, registryDirs: options.registryDirs });
  const ref = parseRegistryReference(text, setup.defaultRegistry, true);
  const template = formatTemplateName(ref);
  for (const resolver of setup.chain) {
    if (!asks(resolver, ref)) continue;
    const versions = await resolver.versions?.(ref);
    if (!versions) continue;
    if (versions.length === 0) {
      throw new DmError('TEMPLATE_NOT_FOUND', `${template} does not exist in ${resolver.name}`, {
        category: 'not-found',
      });
    }
    const request = ref.version;
    if (!request) return { template, versions: newestFirst(versions) };
    // With a version (`redis:v1.0`): the versions it may float to, and the one it resolves to;
    // none is the not-found answer `dm resolve` gives.
    const resolvesTo = pickVersion(versions, request, { subject: template });
    return {
      template,
      requested: formatVersionRequest(request),
      resolvesTo,
      versions: newestFirst(versions.filter((v) => admits(v, request))),
    };
  }
  throw new DmError('REGISTRY_NOT_FOUND', `no configured source serves ${template}`, {
    category: 'not-found',
    hint: 'pass --registry-url or --registry-dir',
  });
}
