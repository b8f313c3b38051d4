/**
 * `dm install`, `dm update`, `dm outdated`, `dm pull` (docs/client.md): resolve every
 * reference a configuration needs, transitively, lock them in `dm.lock`, and fill the
 * content-addressed cache; with `--frozen-lockfile` nothing may change; with `--offline` only the
 * lock, the cache and local directories are used.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve as resolvePath } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { DmConfig } from '../config/config.js';
import { parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';
import { ContentCache } from '../fetch/content-cache.js';
import {
  type DefaultRegistry,
  formatReference,
  formatTemplateName,
  parseReference,
  type RegistryReference,
} from '../reference/reference.js';
import { buildResolverChain, type ResolverSetup } from './build-chain.js';
import { referencesInDocument, referencesInText, urlsInDocument } from './discover-references.js';
import {
  emptyLockFile,
  formatLockFile,
  LOCKFILE_NAME,
  type LockFile,
  lockEntryFor,
  parseLockFile,
  readLockFile,
  resolvedFromLock,
} from './lock-file.js';
import { LockResolver } from './lock-resolver.js';
import { fetchThroughChain, type Resolver, resolveThroughChain } from './resolver.js';
import type { ResolvedVersion } from './types.js';

export interface InstallOptions {
  config: DmConfig;
  registryDirs?: readonly string[];
  frozenLockfile?: boolean;
  /** References to float again although locked (`dm update`); empty array = all. */
  update?: readonly string[];
  warn?: (message: string) => void;
  /** Files fetched at once. Default 8. */
  concurrency?: number;
  /** Called as content is filled in: files done of total. */
  onProgress?: (done: number, total: number) => void;
  /** Properties (values files, then --properties) for expanding the configuration. */
  properties?: Record<string, unknown>;
  /** Expand the configuration to find references templates emit when rendered (default true). */
  expand?: boolean;
}

export interface InstalledReference {
  reference: string;
  version: string;
  digest: string;
  /** What changed in dm.lock for this reference. */
  change: 'added' | 'updated' | 'unchanged';
  previousVersion?: string | undefined;
}

export interface InstallResult {
  lockFile: string;
  references: InstalledReference[];
  removed: string[];
  filesFetched: number;
  filesCached: number;
  lockChanged: boolean;
}

/**
 * The lock file as it was: absent → empty. A damaged one (empty, not YAML, binary, an unknown
 * lockfileVersion, a digest that does not match its files) is rebuilt by `dm install`, saying so;
 * `--frozen-lockfile` refuses it.
 */
function readPreviousLock(text: string | undefined, path: string, options: InstallOptions): LockFile {
  if (text === undefined) return emptyLockFile();
  try {
    return parseLockFile(text, path);
  } catch (error) {
    if (!(error instanceof DmError)) throw error;
    if (options.frozenLockfile) {
      throw new DmError('INVALID_LOCKFILE', `${error.message}; --frozen-lockfile forbids rebuilding it`, {
        category: 'validation',
        hint: 'run dm install without --frozen-lockfile to rebuild dm.lock, and commit it',
      });
    }
    options.warn?.(`${path} is damaged (${error.message}); rebuilding it`);
    return emptyLockFile();
  }
}

/**
 * The lock keys `dm update <text>` names: the reference as written, its canonical form, or its
 * template (every locked version of it). A malformed reference is a usage error; one that names
 * nothing in dm.lock is NOT_IN_LOCK (exit 3).
 */
function lockKeysFor(text: string, lock: LockFile, defaultRegistry: DefaultRegistry | undefined): string[] {
  let canonical: string | undefined;
  let template: string | undefined;
  try {
    const ref = parseReference(text, { defaultRegistry, allowMissingVersion: true });
    if (ref.kind === 'registry') {
      template = formatTemplateName(ref);
      canonical = ref.version ? formatReference(ref) : undefined;
    } else canonical = ref.url;
  } catch (error) {
    if (!(error instanceof DmError)) throw error;
    throw new DmError(error.code, error.message, {
      category: 'usage',
      ...(error.hint ? { hint: error.hint } : {}),
    });
  }
  const keys = Object.entries(lock.references)
    .filter(
      ([key, entry]) =>
        key === text ||
        key === canonical ||
        (canonical === undefined && (entry.template === text || entry.template === template)),
    )
    .map(([key]) => key);
  if (keys.length === 0) {
    throw new DmError('NOT_IN_LOCK', `${text} is not in dm.lock, so there is nothing to update`, {
      category: 'not-found',
      hint: 'dm install adds references; dm update floats the ones dm.lock has',
    });
  }
  return keys;
}

async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item);
    }
  });
  await Promise.all(workers);
}

async function readConfiguration(path: string): Promise<{ doc: unknown; text: string }> {
  const { loadInput } = await import('../input.js');
  let text: string;
  try {
    text = loadInput(path, { accept: ['file'], what: 'the configuration' }).text!;
  } catch (error) {
    if (error instanceof DmError && error.code === 'FILE_NOT_FOUND') {
      throw new DmError('CONFIG_NOT_FOUND', `configuration ${path} does not exist`, {
        category: 'not-found',
      });
    }
    throw error;
  }
  return { doc: parseYaml(text, { source: path, dialect: 'pyyaml' }), text };
}

interface ExpansionDiscovery {
  text: string;
  resolveUrl: ResolverSetup['resolveUrl'];
  properties: Record<string, unknown>;
  resolved: Map<string, ResolvedVersion>;
  chain: readonly Resolver[];
  cache: ContentCache;
  config: DmConfig;
  defaultRegistry: DefaultRegistry | undefined;
  warn: ((message: string) => void) | undefined;
  fetched: Set<string>;
}

/**
 * The references a configuration's expansion resolves (templates' emitted types included). A
 * configuration that does not expand (a required property missing, say) is not an install error:
 * dm warns and the lock holds what static discovery found.
 */
async function referencesByExpansion(path: string, d: ExpansionDiscovery): Promise<string[]> {
  const { createHash } = await import('node:crypto');
  const pins = [...d.resolved].map(([k, r]) => `${k}=${r.digest}`).sort();
  const key = `discovery:${createHash('sha256')
    .update(JSON.stringify([d.text, d.properties, pins, d.defaultRegistry ?? null]))
    .digest('hex')}`;
  const known = await d.cache.readMeta<string[]>(key);
  if (known) return known.value;
  const { RegistryTemplateSource } = await import('./registry-template-source.js');
  const { expandFile } = await import('../expand/index.js');
  const pinned: LockFile = emptyLockFile();
  for (const [k, r] of d.resolved) pinned.references[k] = lockEntryFor(r);
  const source = new RegistryTemplateSource({
    chain: [new LockResolver(pinned), ...d.chain],
    resolveUrl: d.resolveUrl,
    cacheRoot: d.cache.root,
    defaultRegistry: d.defaultRegistry,
    offline: d.config.offline,
    fetched: d.fetched,
    ...(d.warn ? { warn: d.warn } : {}),
  });
  try {
    await expandFile(path, { sources: [source], properties: d.properties });
  } catch (error) {
    if (!(error instanceof DmError)) throw error;
    d.warn?.(
      `the configuration does not expand (${error.message}); dm.lock holds the references found without rendering`,
    );
    return [];
  }
  const found = [...source.resolved.keys()].sort();
  await d.cache.writeMeta(key, found);
  return found;
}

export async function install(configPath: string, options: InstallOptions): Promise<InstallResult> {
  const path = resolvePath(configPath);
  const lockPath = join(dirname(path), LOCKFILE_NAME);
  const previousText = await readFile(lockPath, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  const previous = readPreviousLock(previousText, lockPath, options);
  const cache = new ContentCache({ root: options.config.dirs.cache, warn: options.warn });
  const offline = options.config.offline;

  const setup = await buildResolverChain({
    config: options.config,
    registryDirs: options.registryDirs,
    cache: options.update === undefined,
  });
  const updating = options.update?.map((u) => lockKeysFor(u, previous, setup.defaultRegistry));
  const lockForResolution: LockFile =
    updating === undefined
      ? previous
      : {
          lockfileVersion: previous.lockfileVersion,
          references: Object.fromEntries(
            Object.entries(previous.references).filter(
              ([key]) => updating.length > 0 && !updating.some((keys) => keys.includes(key)),
            ),
          ),
        };
  const lockResolver = new LockResolver(lockForResolution, { frozen: options.frozenLockfile });
  setup.chain.unshift(lockResolver);
  const chain = setup.chain;

  // Discover and resolve, transitively, to a fixed point.
  const { doc, text: configText } = await readConfiguration(path);
  const wanted = new Set(referencesInDocument(doc, setup.defaultRegistry));
  const resolved = new Map<string, ResolvedVersion>();
  /** Digests fetched from a source during this run (the rest came from the cache). */
  const fetched = new Set<string>();
  /** Offline: files needed but not cached. */
  const missing = new Set<string>();
  /** Resolutions that came from a source this run, to remember in the cache. */
  const fresh: ResolvedVersion[] = [];
  /** One fetch per digest, however many files share it. */
  const inflight = new Map<string, Promise<Buffer>>();
  const getFile = (r: ResolvedVersion, file: ResolvedVersion['files'][number]): Promise<Buffer> => {
    let p = inflight.get(file.sha256);
    if (!p) {
      p = fetchFile(chain, cache, r, file, offline, fetched);
      inflight.set(file.sha256, p);
    }
    return p;
  };
  // Plain URL references: pinned by the lock's digests, else fetched (never offline).
  for (const url of urlsInDocument(doc)) {
    const locked = lockForResolution.references[url];
    if (locked) {
      resolved.set(url, resolvedFromLock(url, locked));
    } else if (options.frozenLockfile) {
      throw new DmError(
        'LOCKFILE_OUTDATED',
        `${url} is needed but not in dm.lock, and --frozen-lockfile forbids changing it`,
        {
          category: 'validation',
        },
      );
    } else if (offline) {
      throw new DmError('OFFLINE_MISSING', `${url} is not in dm.lock, and --offline forbids fetching it`, {
        category: 'unreachable',
      });
    } else {
      const { resolved: r, contents } = await setup.resolveUrl(url);
      for (const data of contents.values()) fetched.add((await cache.write(data)).slice('sha256:'.length));
      resolved.set(url, r);
    }
  }
  const hosts = ['github.com', ...Object.keys(options.config.hosts)];
  /** Resolves everything wanted, and what their templates and schemas name, to a fixed point. */
  const resolveWanted = async (): Promise<void> => {
    for (let round = 0; round < 50; round++) {
      const todo = [...wanted].filter((r) => !resolved.has(r)).sort();
      if (todo.length === 0) break;
      const refs = todo.map((t) => parseReference(t) as RegistryReference);
      const { resolved: answers, answeredBy } = await resolveThroughChain(chain, refs);
      answers.forEach((answer, i) => {
        const by = answeredBy[i]!;
        if (by !== lockResolver.name && by !== setup.cache?.name && !setup.unremembered.has(by))
          fresh.push(answer);
      });
      answers.forEach((answer, i) => {
        resolved.set(todo[i]!, { ...answer, reference: todo[i]! });
      });
      // Templates and schemas may name further references.
      for (const answer of answers) {
        for (const file of answer.files) {
          if (file.path !== answer.templateFile && file.path !== answer.schemaFile) continue;
          let data: Buffer;
          try {
            data = await getFile(answer, file);
          } catch (error) {
            if (error instanceof DmError && error.code === 'OFFLINE_MISSING') {
              missing.add(`${answer.template}:${answer.version}/${file.path}`);
              continue;
            }
            throw error;
          }
          const text = data.toString('utf8');
          for (const ref of referencesInText(text, hosts)) wanted.add(ref);
          if (file.path === answer.schemaFile) {
            try {
              for (const ref of referencesInDocument(parseYaml(text, { source: file.path }), undefined))
                wanted.add(ref);
            } catch {
              // a schema that does not parse is reported by expansion, not by install
            }
          }
        }
      }
    }
  };
  await resolveWanted();

  // Render-time discovery (docs/client.md, "transitively"): templates may emit resources whose
  // type is a reference only when rendered. Expanding the configuration through the references
  // just resolved finds them; the answer is remembered per (configuration, properties, digests).
  if (options.expand !== false && missing.size === 0) {
    const found = await referencesByExpansion(path, {
      text: configText,
      resolveUrl: setup.resolveUrl,
      properties: options.properties ?? {},
      resolved,
      chain,
      cache,
      config: options.config,
      defaultRegistry: setup.defaultRegistry,
      warn: options.warn,
      fetched,
    });
    for (const ref of found) wanted.add(ref);
    await resolveWanted();
  }

  // The new lock file.
  const next: LockFile = emptyLockFile();
  for (const [key, r] of resolved) next.references[key] = lockEntryFor(r);
  const nextText = formatLockFile(next);
  const lockChanged = nextText !== previousText;
  const references: InstalledReference[] = [...resolved.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, r]) => {
      const old = previous.references[key];
      return {
        reference: key,
        version: r.version,
        digest: r.digest,
        change: !old
          ? 'added'
          : old.digest !== r.digest || old.version !== r.version
            ? 'updated'
            : 'unchanged',
        ...(old && (old.version !== r.version || old.digest !== r.digest)
          ? { previousVersion: old.version }
          : {}),
      };
    });
  const removed = Object.keys(previous.references)
    .filter((k) => !resolved.has(k))
    .sort();
  if (options.frozenLockfile && lockChanged) {
    const changed = [
      ...references.filter((r) => r.change !== 'unchanged').map((r) => `${r.reference} (${r.change})`),
      ...removed.map((r) => `${r} (no longer needed)`),
    ];
    throw new DmError(
      'LOCKFILE_OUTDATED',
      `dm.lock does not match the configuration: ${changed.join(', ')}`,
      {
        category: 'validation',
        details: { changes: changed },
        hint: 'run dm install without --frozen-lockfile and commit dm.lock',
      },
    );
  }

  // Fill the cache.
  let filesCached = 0;
  const jobs = [...resolved.values()].flatMap((r) => r.files.map((file) => ({ r, file })));
  let done = 0;
  await pool(jobs, options.concurrency ?? 8, async ({ r, file }) => {
    options.onProgress?.(done++, jobs.length);
    if (inflight.has(file.sha256)) return;
    if (await cache.has(file.sha256)) {
      filesCached++;
      return;
    }
    try {
      await getFile(r, file);
    } catch (error) {
      if (error instanceof DmError && error.code === 'OFFLINE_MISSING')
        missing.add(`${r.template}:${r.version}/${file.path}`);
      else throw error;
    }
  });
  if (missing.size > 0) {
    const list = [...missing].sort();
    throw new DmError(
      'OFFLINE_MISSING',
      `--offline: ${list.length} file${list.length === 1 ? ' is' : 's are'} not in the cache: ${list.slice(0, 10).join(', ')}${
        list.length > 10 ? `, and ${list.length - 10} more (all listed with -o json)` : ''
      }`,
      {
        category: 'unreachable',
        details: { missing: list },
        hint: 'run dm install once with network access',
      },
    );
  }
  options.onProgress?.(jobs.length, jobs.length);
  const filesFetched = fetched.size;
  // Remember what sources answered (not what the lock or the cache already knew): one small write each.
  if (!offline && fresh.length > 0) await setup.cache?.remember(fresh);
  if (lockChanged) await writeFileAtomic(lockPath, nextText);
  return { lockFile: lockPath, references, removed, filesFetched, filesCached, lockChanged };
}

/** A file's bytes from the cache, else fetched through the chain and stored (verified against its digest). */
export async function fetchFile(
  chain: readonly Resolver[],
  cache: ContentCache,
  resolved: ResolvedVersion,
  file: ResolvedVersion['files'][number],
  offline: boolean,
  fetched?: Set<string>,
): Promise<Buffer> {
  const cached = await cache.read(file.sha256);
  if (cached) return cached;
  let data: Buffer;
  try {
    data = await fetchThroughChain(chain, resolved, file);
  } catch (error) {
    if (offline && error instanceof DmError && error.code === 'CONTENT_NOT_FOUND') {
      throw new DmError(
        'OFFLINE_MISSING',
        `${file.path} of ${resolved.template}:${resolved.version} is not in the cache, and --offline forbids fetching it`,
        { category: 'unreachable', hint: 'run dm install once with network access' },
      );
    }
    throw error;
  }
  fetched?.add(file.sha256);
  try {
    await cache.write(data, file.sha256);
  } catch (error) {
    if (error instanceof DmError && error.code === 'DIGEST_MISMATCH') {
      throw new DmError(
        'DIGEST_MISMATCH',
        `${file.path} of ${resolved.template}:${resolved.version} does not match its recorded digest (${file.sha256})`,
        {
          category: 'validation',
          hint: 'the registry changed under a locked version; run dm update to re-lock it deliberately',
        },
      );
    }
    throw error;
  }
  return data;
}

export interface OutdatedEntry {
  reference: string;
  locked: string;
  /** Newest version the reference's own float allows (what `dm update` would pick). */
  wanted: string;
  /** Newest release of the template (may need an explicit change of the reference). */
  latest: string;
}

/** `dm outdated`: for every locked reference, the newer patch it could float to and the newest release. */
export async function outdated(
  configPath: string,
  options: Pick<InstallOptions, 'config' | 'registryDirs'>,
): Promise<OutdatedEntry[]> {
  const lockPath = join(dirname(resolvePath(configPath)), LOCKFILE_NAME);
  const lock = await readLockFile(lockPath);
  if (!lock) {
    throw new DmError('LOCKFILE_NOT_FOUND', `${lockPath} does not exist`, {
      category: 'not-found',
      hint: 'run dm install first',
    });
  }
  const setup = await buildResolverChain({ config: options.config, registryDirs: options.registryDirs });
  const { pickLatest, pickVersion } = await import('../reference/pick-version.js');
  const out: OutdatedEntry[] = [];
  for (const [key, entry] of Object.entries(lock.references).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const ref = parseReference(key) as RegistryReference;
    let versions: string[] | null = null;
    for (const resolver of setup.chain) {
      versions = (await resolver.versions?.(ref)) ?? null;
      if (versions) break;
    }
    if (!versions || versions.length === 0) continue;
    let wanted = entry.version;
    try {
      wanted = ref.version ? pickVersion(versions, ref.version) : pickLatest(versions);
    } catch {
      // the locked version's line has vanished from the registry: nothing to float to
    }
    const latest = pickLatest(versions);
    if (wanted !== entry.version || latest !== entry.version)
      out.push({ reference: key, locked: entry.version, wanted, latest });
  }
  return out;
}

export interface PullResult {
  reference: string;
  version: string;
  digest: string;
  files: string[];
  to?: string | undefined;
}

/** `dm pull <ref> [--to dir]`: fetch a version into the cache and, with `to`, write its files there. */
export async function pull(
  text: string,
  options: Pick<InstallOptions, 'config' | 'registryDirs' | 'warn'> & { to?: string | undefined },
): Promise<PullResult> {
  const cache = new ContentCache({ root: options.config.dirs.cache, warn: options.warn });
  const setup = await buildResolverChain({ config: options.config, registryDirs: options.registryDirs });
  const ref = parseReference(text, { defaultRegistry: setup.defaultRegistry, allowMissingVersion: true });
  if (ref.kind !== 'registry')
    throw new DmError('URL_REFERENCE_NOT_SUPPORTED', `'${text}' is a plain URL`, { category: 'usage' });
  const {
    resolved: [resolved],
  } = await resolveThroughChain(setup.chain, [ref]);
  const r = resolved!;
  const { mkdir, rename, writeFile } = await import('node:fs/promises');
  const staged: { path: string; data: Buffer }[] = [];
  for (const file of r.files)
    staged.push({
      path: file.path,
      data: await fetchFile(setup.chain, cache, r, file, options.config.offline),
    });
  if (options.to) {
    // Write into a temporary sibling directory, then rename it into place: all files or none.
    const target = resolvePath(options.to);
    const tmp = `${target}.dm-tmp-${process.pid}`;
    for (const { path, data } of staged) {
      const dest = join(tmp, path);
      if (!dest.startsWith(`${tmp}/`))
        throw new DmError('UNSAFE_PATH', `refusing to write '${path}' outside ${target}`);
      await mkdir(dirname(dest), { recursive: true });
      await writeFile(dest, data);
    }
    try {
      await rename(tmp, target);
    } catch (error) {
      const { rm } = await import('node:fs/promises');
      await rm(tmp, { recursive: true, force: true });
      throw new DmError('TARGET_EXISTS', `cannot write to ${target}: ${(error as Error).message}`, {
        category: 'conflict',
        hint: 'choose a directory that does not exist yet',
      });
    }
  }
  return {
    reference: r.reference,
    version: r.version,
    digest: r.digest,
    files: r.files.map((f) => f.path),
    to: options.to,
  };
}
