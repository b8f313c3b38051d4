/**
 * `dm install`, `dm update`, `dm outdated`, `dm pull` (docs/client.md): resolve every
 * reference a configuration needs, transitively, lock them in `dm.lock`, and fill the
 * content-addressed cache; with `--frozen-lockfile` nothing may change; with `--offline` only the
 * lock, the cache and local directories are used.
 */
import { dirname, join, resolve as resolvePath } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { count } from '../cli/format.js';
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
import { buildResolverChain } from './build-chain.js';
import { referencesInDocument, referencesInText, urlsInDocument } from './discover-references.js';
import {
  emptyLockFile,
  formatLockFile,
  LOCKFILE_NAME,
  type LockFile,
  lockEntryFor,
  parseLockFile,
  readLockFile,
  readLockText,
} from './lock-file.js';
import { LockResolver } from './lock-resolver.js';
import { ResolutionSession } from './resolution-session.js';
import { asks } from './resolver.js';
import type { ResolvedVersion } from './types.js';
import { checksumVerifierFor, verifyChecksums } from './verify-checksums.js';

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
  /** Called as each step ends (`dm install -v`): its name, what it found, and how long it took. */
  onStep?: (step: InstallStep) => void;
}

/** One finished step of `install` (docs/client.md "Progress, -q and -v"). */
export interface InstallStep {
  name: string;
  /** What the step found, in a few words ("3 references"). */
  detail: string;
  ms: number;
}

/** Runs one step of install and reports it to `onStep` with its duration. */
async function step<T>(
  options: InstallOptions,
  name: string,
  run: () => T | Promise<T>,
  detail: (result: T) => string,
): Promise<T> {
  const started = performance.now();
  const result = await run();
  options.onStep?.({ name, detail: detail(result), ms: performance.now() - started });
  return result;
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

/** Step 1: dm.lock as it is (absent → empty), and its text, to tell whether the new one differs. */
async function readLock(
  lockPath: string,
  options: InstallOptions,
): Promise<{ text?: string; lock: LockFile }> {
  const text = await readLockText(lockPath);
  const lock = readPreviousLock(text, lockPath, options);
  return text === undefined ? { lock } : { text, lock };
}

/** The part of dm.lock that pins this run: all of it, less what `dm update` floats. */
function lockInForce(
  previous: LockFile,
  update: readonly string[] | undefined,
  defaultRegistry: DefaultRegistry | undefined,
): LockFile {
  if (update === undefined) return previous;
  const floating = new Set(update.flatMap((u) => lockKeysFor(u, previous, defaultRegistry)));
  return {
    lockfileVersion: previous.lockfileVersion,
    references: Object.fromEntries(
      Object.entries(previous.references).filter(([key]) => update.length > 0 && !floating.has(key)),
    ),
  };
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
        ...(error.hint ? { hint: error.hint } : {}), // did you mean the file beside it
      });
    }
    throw error;
  }
  return { doc: parseYaml(text, { source: path, dialect: 'pyyaml' }), text };
}

/** Step 2: what the configuration names without rendering — registry references and plain URLs. */
function referencesOfConfiguration(
  doc: unknown,
  defaultRegistry: DefaultRegistry | undefined,
  onWarning?: (message: string) => void,
): string[] {
  return [...referencesInDocument(doc, defaultRegistry, onWarning), ...urlsInDocument(doc)];
}

interface Resolved {
  /** Canonical reference → resolution: the closure of what was asked. */
  resolutions: Map<string, ResolvedVersion>;
  /** Offline: template or schema files needed to look further but not cached. */
  missing: string[];
}

/**
 * Step 3: resolves references and, to a fixed point, the full references their templates and
 * schemas name (docs/client.md "Commands"), through the session.
 */
async function resolveTransitively(
  session: ResolutionSession,
  wanted: readonly string[],
  hosts: readonly string[],
): Promise<Resolved> {
  const resolutions = new Map<string, ResolvedVersion>();
  const missing: string[] = [];
  let todo = [...new Set(wanted)].sort();
  for (let round = 0; round < 50 && todo.length > 0; round++) {
    const answers = await session.resolve(todo.map((t) => parseReference(t)));
    const named = new Set<string>();
    for (const answer of answers) {
      resolutions.set(answer.reference, answer);
      for (const file of answer.files) {
        if (file.path !== answer.templateFile && file.path !== answer.schemaFile) continue;
        let text: string;
        try {
          text = (await session.file(answer, file)).toString('utf8');
        } catch (error) {
          if (error instanceof DmError && error.code === 'OFFLINE_MISSING') {
            missing.push(`${answer.template}:${answer.version}/${file.path}`);
            continue;
          }
          throw error;
        }
        for (const ref of referencesInText(text, hosts)) named.add(ref);
        if (file.path === answer.schemaFile) {
          try {
            for (const ref of referencesInDocument(parseYaml(text, { source: file.path }), undefined))
              named.add(ref);
          } catch {
            // a schema that does not parse is reported by expansion, not by install
          }
        }
      }
    }
    todo = [...named].filter((r) => !resolutions.has(r)).sort();
  }
  return { resolutions, missing };
}

interface ExpansionDiscovery {
  text: string;
  properties: Record<string, unknown>;
  session: ResolutionSession;
  /** What the static steps resolved (the expansion resolves through the same session). */
  resolutions: ReadonlyMap<string, ResolvedVersion>;
  defaultRegistry: DefaultRegistry | undefined;
  warn: ((message: string) => void) | undefined;
}

/**
 * Step 4: the references a configuration's expansion resolves (templates' emitted types included),
 * resolved by install's own session. A configuration that does not expand (a required property
 * missing, say) is not an install error: dm warns and the lock holds what static discovery found.
 */
async function referencesByExpansion(path: string, d: ExpansionDiscovery): Promise<string[]> {
  const { createHash } = await import('node:crypto');
  const pins = [...d.resolutions].map(([k, r]) => `${k}=${r.digest}`).sort();
  const key = `discovery:${createHash('sha256')
    .update(JSON.stringify([d.text, d.properties, pins, d.defaultRegistry ?? null]))
    .digest('hex')}`;
  const cache = d.session.options.cache;
  // The files the expansion read beside the configuration (templates, schemas) are part of the
  // answer's key: a schema that now imports another URL, or a template that emits another
  // reference, is discovered again (docs/expansion.md "Imports by URL"); so is a template file
  // added where a type was looked for and not found.
  const { readFile } = await import('node:fs/promises');
  const digestOf = async (file: string) => {
    try {
      return createHash('sha256')
        .update(await readFile(file))
        .digest('hex');
    } catch {
      return '';
    }
  };
  const known = await cache.readMeta<{ found: string[]; files: Record<string, string> }>(key);
  if (known && Array.isArray(known.value.found) && known.value.files) {
    const files = Object.entries(known.value.files);
    const same = await Promise.all(files.map(async ([file, sha]) => (await digestOf(file)) === sha));
    if (same.every(Boolean)) return known.value.found;
  }
  const { RegistryTemplateSource } = await import('./registry-template-source.js');
  const { expandFile } = await import('../expand/index.js');
  const source = new RegistryTemplateSource({ session: d.session, defaultRegistry: d.defaultRegistry });
  let read: { localFiles?: string[] | undefined; absentFiles?: string[] | undefined };
  try {
    read = await expandFile(path, { sources: [source], properties: d.properties });
  } catch (error) {
    // A reference the expansion needs and a frozen dm.lock lacks fails the install (npm ci's rule).
    if (!(error instanceof DmError) || error.code === 'LOCKFILE_OUTDATED') throw error;
    d.warn?.(
      `the configuration does not expand (${error.message}); dm.lock holds the references found without rendering`,
    );
    return [];
  }
  const found = [...source.resolved.keys()].sort();
  const files: Record<string, string> = {};
  for (const file of read.localFiles ?? []) files[file] = await digestOf(file);
  // A type's file that was absent is recorded as '' (digestOf's answer): adding it discovers again.
  for (const file of read.absentFiles ?? []) files[file] ??= '';
  await cache.writeMeta(key, { found, files });
  return found;
}

interface LockComparison {
  text: string;
  changed: boolean;
  references: InstalledReference[];
  removed: string[];
}

/** Step 5: the new dm.lock, and how it differs from the old; `--frozen-lockfile` forbids any difference. */
function compareWithLock(
  resolutions: ReadonlyMap<string, ResolvedVersion>,
  previous: { text?: string; lock: LockFile },
  frozen: boolean | undefined,
): LockComparison {
  const next: LockFile = emptyLockFile();
  for (const [key, r] of resolutions) next.references[key] = lockEntryFor(r);
  const text = formatLockFile(next);
  const changed = text !== previous.text;
  const references: InstalledReference[] = [...resolutions.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, r]) => {
      const old = previous.lock.references[key];
      const differs = old !== undefined && (old.digest !== r.digest || old.version !== r.version);
      return {
        reference: key,
        version: r.version,
        digest: r.digest,
        change: !old ? 'added' : differs ? 'updated' : 'unchanged',
        ...(differs ? { previousVersion: old.version } : {}),
      };
    });
  const removed = Object.keys(previous.lock.references)
    .filter((k) => !resolutions.has(k))
    .sort();
  if (frozen && changed) {
    const changes = [
      ...references.filter((r) => r.change !== 'unchanged').map((r) => `${r.reference} (${r.change})`),
      ...removed.map((r) => `${r} (no longer needed)`),
    ];
    throw new DmError('LOCKFILE_OUTDATED', `dm.lock does not match the configuration: ${someOf(changes)}`, {
      category: 'validation',
      details: { changes },
      hint: 'run dm install without --frozen-lockfile and commit dm.lock',
    });
  }
  return { text, changed, references, removed };
}

/** Step 6: every file of every resolution into the cache; offline, what is missing is listed at once. */
async function fetchAll(
  session: ResolutionSession,
  resolutions: ReadonlyMap<string, ResolvedVersion>,
  missingBefore: readonly string[],
  options: InstallOptions,
): Promise<{ filesCached: number }> {
  const missing = new Set(missingBefore);
  // Contents, as session.fetched counts them: a file read from the cache while resolving (a
  // template scanned for references) is as cached as one found here.
  const cached = new Set<string>();
  const jobs = [...resolutions.values()].flatMap((r) => r.files.map((file) => ({ r, file })));
  let done = 0;
  await pool(jobs, options.concurrency ?? 8, async ({ r, file }) => {
    options.onProgress?.(done++, jobs.length);
    if (session.hasRead(file.sha256)) {
      cached.add(file.sha256); // unless it was fetched (maybe still being fetched): see below
      return;
    }
    if (await session.options.cache.has(file.sha256)) {
      cached.add(file.sha256);
      return;
    }
    try {
      await session.file(r, file);
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
      `--offline: ${list.length} file${list.length === 1 ? ' is' : 's are'} not in the cache: ${someOf(list)}`,
      {
        category: 'unreachable',
        details: { missing: list },
        hint: 'run dm install once with network access',
      },
    );
  }
  options.onProgress?.(jobs.length, jobs.length);
  return { filesCached: [...cached].filter((digest) => !session.fetched.has(digest)).length };
}

/**
 * `dm install` and `dm update`, as steps that each return their result: read dm.lock → discover
 * (without rendering) → resolve transitively → discover by expanding → compare with the lock →
 * fetch → write dm.lock and remember what sources answered. One resolution session serves every
 * step, so nothing is resolved twice, nor two ways.
 */
export async function install(configPath: string, options: InstallOptions): Promise<InstallResult> {
  const path = resolvePath(configPath);
  const lockPath = join(dirname(path), LOCKFILE_NAME);
  const previous = await step(
    options,
    'read dm.lock',
    () => readLock(lockPath, options),
    (p) =>
      p.text === undefined ? 'none yet' : count(Object.keys(p.lock.references).length, 'locked reference'),
  );
  const setup = await buildResolverChain({
    config: options.config,
    registryDirs: options.registryDirs,
    cache: options.update === undefined,
    onWarning: options.warn,
  });
  const pinned = lockInForce(previous.lock, options.update, setup.defaultRegistry);
  const lockResolver = new LockResolver(pinned, { frozen: options.frozenLockfile });
  const session = new ResolutionSession({
    chain: [lockResolver, ...setup.chain],
    cache: new ContentCache({ root: options.config.dirs.cache, warn: options.warn }),
    offline: options.config.offline,
  });
  const hosts = ['github.com', ...Object.keys(options.config.hosts)];

  const { text, wanted } = await step(
    options,
    'discover',
    async () => {
      const read = await readConfiguration(path);
      const warn = options.warn && ((said: string) => options.warn?.(`${path}: ${said}`));
      return { ...read, wanted: referencesOfConfiguration(read.doc, setup.defaultRegistry, warn) };
    },
    (r) => `${count(new Set(r.wanted).size, 'reference')} in ${path}`,
  );
  const resolvedNote = (r: Resolved) =>
    `${count(r.resolutions.size, 'version')}${r.missing.length ? `, ${r.missing.length} not cached` : ''}`;
  let { resolutions, missing } = await step(
    options,
    'resolve',
    () => resolveTransitively(session, wanted, hosts),
    resolvedNote,
  );
  if (options.expand !== false && missing.length === 0) {
    const found = await step(
      options,
      'expand',
      () =>
        referencesByExpansion(path, {
          text,
          properties: options.properties ?? {},
          session,
          resolutions,
          defaultRegistry: setup.defaultRegistry,
          warn: options.warn,
        }),
      (f) => `${count(f.length, 'reference')} emitted`,
    );
    ({ resolutions, missing } = await step(
      options,
      'resolve',
      () => resolveTransitively(session, [...resolutions.keys(), ...found], hosts),
      resolvedNote,
    ));
  }
  const lock = await step(
    options,
    'compare with dm.lock',
    () => compareWithLock(resolutions, previous, options.frozenLockfile),
    (l) => {
      const changed = l.references.filter((r) => r.change !== 'unchanged').length + l.removed.length;
      return changed === 0 ? 'unchanged' : count(changed, 'change');
    },
  );
  const verifier = checksumVerifierFor(options.config);
  if (verifier) {
    // What dm.lock already pins was verified when it was locked; new or changed entries (all of
    // them with --frozen-lockfile) are checked against the server's checksum log first.
    const changed = new Set(lock.references.filter((r) => r.change !== 'unchanged').map((r) => r.reference));
    const keyOf = new Map([...resolutions].map(([key, r]) => [r, key]));
    const answeredBy = (r: ResolvedVersion) => session.answeredBy.get(keyOf.get(r) ?? '');
    const checked = [...resolutions]
      .filter(([key]) => options.frozenLockfile || changed.has(key))
      .map(([, r]) => r);
    await step(
      options,
      'verify checksums',
      () =>
        verifyChecksums(verifier, checked, {
          exempt: options.config.noSumCheck ?? [],
          lockPath,
          locked: (r) => answeredBy(r) === lockResolver.name,
          fromServer: (r) => answeredBy(r)?.startsWith('registry server ') === true,
          warn: options.warn,
        }),
      () => count(checked.length, 'version'),
    );
  }
  const { filesCached } = await step(
    options,
    'fetch',
    () => fetchAll(session, resolutions, missing, options),
    (f) => `${count(session.fetched.size, 'file')} fetched, ${f.filesCached} already cached`,
  );

  // Remember what sources answered (not what the lock or the cache already knew): one small write each.
  const notRemembered = new Set([lockResolver.name, setup.cache?.name, ...setup.unremembered]);
  const fresh = [...resolutions.keys()]
    .filter((key) => !notRemembered.has(session.answeredBy.get(key)))
    .map((key) => resolutions.get(key)!);
  await step(
    options,
    'write dm.lock',
    async () => {
      if (!options.config.offline && fresh.length > 0) await setup.cache?.remember(fresh);
      if (lock.changed) await writeFileAtomic(lockPath, lock.text);
    },
    () => (lock.changed ? 'written' : 'up to date'),
  );
  return {
    lockFile: lockPath,
    references: lock.references,
    removed: lock.removed,
    filesFetched: session.fetched.size,
    filesCached,
    lockChanged: lock.changed,
  };
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
      if (!asks(resolver, ref)) continue;
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
/**
 * Checks `pull --to`'s directory before anything is fetched into it and makes the temporary sibling
 * it is written into (one level, never recursive: a recursive mkdir under /proc never ends). Every
 * error names the path as the user typed it (`shown`).
 */
async function createPullDirectory(shown: string, target: string, tmp: string): Promise<void> {
  const { mkdir, stat } = await import('node:fs/promises');
  const exists = await stat(target).then(
    () => true,
    () => false,
  );
  if (exists) {
    throw new DmError('TARGET_EXISTS', `cannot write to ${shown}: it already exists`, {
      category: 'conflict',
      hint: 'choose a directory that does not exist yet',
    });
  }
  try {
    await mkdir(tmp);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const parentExists = await stat(dirname(target)).then(
      (info) => info.isDirectory(),
      () => false,
    );
    const why =
      code === 'ENOENT' && !parentExists
        ? `its parent directory ${dirname(shown)} does not exist`
        : code === 'ENOENT'
          ? `no directory can be made in ${dirname(shown)}`
          : code === 'ENOTDIR'
            ? `a part of ${dirname(shown)} is not a directory`
            : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
              ? `permission denied`
              : `${code ?? (error as Error).message}`;
    throw new DmError('TARGET_UNWRITABLE', `cannot write to ${shown}: ${why}`);
  }
}

export async function pull(
  text: string,
  options: Pick<InstallOptions, 'config' | 'registryDirs' | 'warn'> & { to?: string | undefined },
): Promise<PullResult> {
  const setup = await buildResolverChain({ config: options.config, registryDirs: options.registryDirs });
  const ref = parseReference(text, { defaultRegistry: setup.defaultRegistry, allowMissingVersion: true });
  if (ref.kind !== 'registry')
    throw new DmError('URL_REFERENCE_NOT_SUPPORTED', `'${text}' is a plain URL`, { category: 'usage' });
  const session = new ResolutionSession({
    chain: setup.chain,
    cache: new ContentCache({ root: options.config.dirs.cache, warn: options.warn }),
    offline: options.config.offline,
  });
  const r = (await session.resolve([ref]))[0]!;
  const contents = await session.contents(r);
  const { mkdir, rename, writeFile } = await import('node:fs/promises');
  if (options.to) {
    // Write into a temporary sibling directory, then rename it into place: all files or none.
    const target = resolvePath(options.to);
    const tmp = `${target}.dm-tmp-${process.pid}`;
    await createPullDirectory(options.to, target, tmp);
    for (const [path, data] of contents) {
      const dest = join(tmp, path);
      if (!dest.startsWith(`${tmp}/`))
        throw new DmError('UNSAFE_PATH', `refusing to write '${path}' outside ${target}`);
      await mkdir(dirname(dest), { recursive: true });
      await writeFile(dest, data);
    }
    try {
      await rename(tmp, target);
    } catch {
      const { rm } = await import('node:fs/promises');
      await rm(tmp, { recursive: true, force: true });
      throw new DmError('TARGET_EXISTS', `cannot write to ${options.to}: it already exists`, {
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

/** The first ten of a list an error names, and how many more (the whole list is in its details). */
export function someOf(list: readonly string[]): string {
  return `${list.slice(0, 10).join(', ')}${list.length > 10 ? `, and ${list.length - 10} more (all listed with -o json)` : ''}`;
}
