/**
 * From a snapshot to the rows of an index (docs/server.md "Indexing", docs/registry-layout.md "Digests"), pure apart
 * from reading blobs: scan the tree with the shared scanner, read only the content the store does
 * not have, compute sha256 per file and the version digest, parse schemas. That work runs in a
 * worker thread (build-index-pool.ts; docs/server.md, "Index building off the request thread").
 */
import { parseYaml } from '../../../client/src/document/yaml.js';
import { compareVersions, tryParseVersion } from '../../../client/src/reference/index.js';
import type { Finding, ScannedVersion, TemplateKind, TreeEntry } from '../../../client/src/registry/index.js';
import { scanRegistryTree, sha256Hex, versionDigest } from '../../../client/src/registry/index.js';
import { gitBlobSha } from '../../../client/src/source/index.js';

export interface IndexedFile {
  path: string;
  sha256: string;
  gitSha: string;
  size: number;
  /** Present when the store does not have this content yet. */
  content?: Buffer;
}

export interface IndexedVersion {
  version: string;
  kind: TemplateKind;
  dir: string;
  templateFile: string;
  schemaFile: string | null;
  hasExample: boolean;
  digest: string;
  /** The git tree SHA of the version directory, when the source is git (docs/integrity-store.md §3). */
  treeSha?: string | null;
  schema: unknown;
  files: IndexedFile[];
}

export interface IndexedTemplate {
  collection: string;
  name: string;
  latestVersion: string | null;
  title: string | null;
  description: string | null;
  /** Property names of the latest version's schema, for search. */
  properties: string[];
  versions: IndexedVersion[];
}

export interface BuiltIndex {
  templates: IndexedTemplate[];
  findings: Finding[];
  registryYaml: IndexedFile | null;
}

/**
 * What the store already has, by git blob id: the sha256 and the content, asked in batches. One
 * shape for every store (docs/server.md, "The store"): an in-process store answers at once
 * (`knownContentOf`), one over the network in one statement per batch.
 */
export interface KnownContent {
  /** git blob id → sha256 for those of `gitShas` the store has. */
  sha256ForGitShas(gitShas: readonly string[]): Promise<Map<string, string>>;
  /** sha256 → content for those of `sha256s` the store has. */
  contents(sha256s: readonly string[]): Promise<Map<string, Buffer>>;
}

/** KnownContent over lookups answered at once (SQLite's statements, a test's maps). */
export function knownContentOf(lookup: {
  sha256ForGitSha(gitSha: string): string | undefined;
  content(sha256: string): Buffer | undefined;
}): KnownContent {
  return {
    async sha256ForGitShas(gitShas) {
      const out = new Map<string, string>();
      for (const g of gitShas) {
        const sha = lookup.sha256ForGitSha(g);
        if (sha !== undefined) out.set(g, sha);
      }
      return out;
    },
    async contents(sha256s) {
      const out = new Map<string, Buffer>();
      for (const sha of sha256s) {
        const content = lookup.content(sha);
        if (content) out.set(sha, content);
      }
      return out;
    },
  };
}

/** A store that has nothing yet. */
export const NO_KNOWN_CONTENT: KnownContent = knownContentOf({
  sha256ForGitSha: () => undefined,
  content: () => undefined,
});

/**
 * A version as the last sync stored it, by its directory: reused as it is when the tree SHA of
 * its directory has not changed (docs/server.md, "Indexing": cheap change detection).
 */
export interface PreviousVersion {
  treeSha: string;
  digest: string;
  /** The parsed schema as stored (JSON), or null. */
  schemaJson: string | null;
}

const VERSION_SEGMENT = /^v\d/;

/** Top-level directories holding their own registry.yaml: separate registries, never read. */
function nestedRegistryDirs(entries: readonly TreeEntry[]): Set<string> {
  const out = new Set<string>();
  for (const e of entries) {
    const parts = e.path.split('/');
    if (e.type === 'blob' && parts.length === 2 && parts[1] === 'registry.yaml') out.add(parts[0]!);
  }
  return out;
}

/** Blobs that can belong to a version directory (some ancestor is named like a version), or registry.yaml. */
function mayBeNeeded(entry: TreeEntry): boolean {
  if (entry.type !== 'blob') return false;
  if (entry.path === 'registry.yaml') return true;
  const parts = entry.path.split('/');
  for (let i = 0; i < parts.length - 1; i++) if (VERSION_SEGMENT.test(parts[i] ?? '')) return true;
  return false;
}

/** Title, description and property names of a parsed schema, for the template row and search. */
export function schemaInfo(schema: unknown): {
  title: string | null;
  description: string | null;
  properties: string[];
} {
  if (!schema || typeof schema !== 'object') return { title: null, description: null, properties: [] };
  const s = schema as { info?: { title?: unknown; description?: unknown }; properties?: unknown };
  const title = typeof s.info?.title === 'string' ? s.info.title : null;
  const description = typeof s.info?.description === 'string' ? s.info.description : null;
  const properties = s.properties && typeof s.properties === 'object' ? Object.keys(s.properties) : [];
  return { title, description, properties };
}

/**
 * What indexing a snapshot reads, in batches. The main thread answers these for the worker that
 * runs `indexSnapshot` (docs/server.md, "Index building off the request thread").
 */
export interface IndexPorts {
  /** git blob id → sha256 of the content the store already has, for the snapshot's blobs. */
  knownSha: ReadonlyMap<string, string>;
  /** Reads blobs of the snapshot by path, in one batch. */
  read(paths: readonly string[]): Promise<Map<string, Buffer>>;
  /** Content the store has, by sha256, in one batch. */
  contents(sha256s: readonly string[]): Promise<Map<string, Buffer>>;
  /** The registry's stored versions by directory (BuildIndexOptions.previous). */
  previous?: ReadonlyMap<string, PreviousVersion>;
}

/**
 * Builds the index of a snapshot's entries: the CPU-heavy part of a sync (scanning, hashing,
 * parsing schemas). Reads the blobs the store lacks in as few batches as possible.
 */
export async function indexSnapshot(entries: readonly TreeEntry[], ports: IndexPorts): Promise<BuiltIndex> {
  const byPath = new Map<string, TreeEntry>();
  for (const e of entries) byPath.set(e.path, e);

  const fetched = new Map<string, Buffer>();
  const stored = new Map<string, Buffer>();
  const knownShaOf = (e: TreeEntry | undefined): string | undefined =>
    e?.gitSha ? ports.knownSha.get(e.gitSha) : undefined;
  const isKnown = (e: TreeEntry): boolean => knownShaOf(e) !== undefined;
  const readInto = async (wanted: readonly TreeEntry[]) => {
    if (!wanted.length) return;
    for (const [path, content] of await ports.read(wanted.map((e) => e.path))) fetched.set(path, content);
  };
  const loadStored = async (paths: readonly string[]) => {
    const shas = new Set<string>();
    for (const path of paths) {
      const sha = fetched.has(path) ? undefined : knownShaOf(byPath.get(path));
      if (sha && !stored.has(sha)) shas.add(sha);
    }
    if (!shas.size) return;
    for (const [sha, content] of await ports.contents([...shas])) stored.set(sha, content);
  };

  const yamlEntry = byPath.get('registry.yaml');
  if (yamlEntry?.type === 'blob' && !isKnown(yamlEntry)) {
    // registry.yaml is new: what the versions are is not known before reading it, so read, in one
    // batch, everything that may belong to a version (a superset) together with it.
    const nested = nestedRegistryDirs(entries);
    await readInto(
      entries.filter((e) => mayBeNeeded(e) && !nested.has(e.path.split('/')[0] ?? '') && !isKnown(e)),
    );
  } else if (yamlEntry?.type === 'blob') {
    await loadStored(['registry.yaml']);
  }

  const contentOf = (path: string): Buffer | undefined => {
    const hit = fetched.get(path);
    if (hit) return hit;
    const sha = knownShaOf(byPath.get(path));
    return sha ? stored.get(sha) : undefined;
  };

  const yamlContent = yamlEntry?.type === 'blob' ? contentOf('registry.yaml') : undefined;
  const scan = scanRegistryTree(entries, {
    ...(yamlContent ? { registryYaml: yamlContent.toString('utf8') } : {}),
  });

  // Cheap change detection: a version whose directory has the tree SHA the last sync stored, every
  // file known with its size, and a parsed schema when it has one, is taken as stored — nothing of
  // it is read, loaded or parsed again. Sources without tree SHAs (directories) never match.
  const reused = new Map<ScannedVersion, PreviousVersion>();
  for (const v of scan.versions) {
    const prev = ports.previous?.get(v.dir);
    const treeSha = byPath.get(v.dir)?.gitSha;
    if (!prev || !treeSha || prev.treeSha !== treeSha) continue;
    if (v.schemaFile && prev.schemaJson === null) continue;
    const whole = v.files.every((f) => {
      const e = byPath.get(f.repoPath);
      return e !== undefined && e.size !== undefined && isKnown(e);
    });
    if (whole) reused.set(v, prev);
  }

  // The content of the versions' files that the store lacks (all of it, when nothing was read yet).
  const missing: TreeEntry[] = [];
  // Stored content needed here: schemas to parse, and files whose tree entry has no size.
  const needStored: string[] = [];
  for (const v of scan.versions) {
    if (reused.has(v)) continue;
    if (v.schemaFile) needStored.push(`${v.dir}/${v.schemaFile}`);
    for (const f of v.files) {
      if (fetched.has(f.repoPath)) continue;
      const e = byPath.get(f.repoPath);
      if (e && !isKnown(e)) missing.push(e);
      else if (e && e.size === undefined) needStored.push(f.repoPath);
    }
  }
  await readInto(missing);
  await loadStored(needStored);

  const fileOf = (repoPath: string, path: string): IndexedFile => {
    const e = byPath.get(repoPath);
    const content = fetched.get(repoPath);
    if (content) {
      return {
        path,
        sha256: sha256Hex(content),
        gitSha: e?.gitSha ?? gitBlobSha(content),
        size: content.length,
        content,
      };
    }
    const sha = knownShaOf(e);
    if (!e?.gitSha || !sha) throw new Error(`content of ${repoPath} is unavailable`);
    return { path, sha256: sha, gitSha: e.gitSha, size: e.size ?? stored.get(sha)?.length ?? 0 };
  };

  const findings = [...scan.findings];
  const groups = new Map<string, ScannedVersion[]>();
  for (const v of scan.versions) {
    const key = `${v.collection}\0${v.template}`;
    const list = groups.get(key);
    if (list) list.push(v);
    else groups.set(key, [v]);
  }
  const templates: IndexedTemplate[] = [];
  for (const list of groups.values()) {
    const versions: IndexedVersion[] = [];
    for (const v of list) {
      const files = v.files.map((f) => fileOf(f.repoPath, f.path));
      const prev = reused.get(v);
      let schema: unknown = null;
      if (prev) schema = prev.schemaJson === null ? null : JSON.parse(prev.schemaJson);
      else if (v.schemaFile) {
        const schemaPath = `${v.dir}/${v.schemaFile}`;
        const content = contentOf(schemaPath);
        try {
          schema = content ? parseYaml(content.toString('utf8'), { source: schemaPath }) : null;
        } catch (error) {
          findings.push({
            code: 'SCHEMA_INVALID_YAML',
            severity: 'warning',
            path: schemaPath,
            message: (error as Error).message,
            collection: v.collection,
            template: v.template,
            version: v.version,
          });
        }
      }
      versions.push({
        version: v.version,
        kind: v.kind,
        dir: v.dir,
        templateFile: v.templateFile,
        schemaFile: v.schemaFile ?? null,
        hasExample: v.hasExample,
        digest: prev ? prev.digest : versionDigest(files),
        treeSha: byPath.get(v.dir)?.gitSha ?? null,
        schema,
        files,
      });
    }
    const first = list[0]!;
    const latest = latestOf(versions);
    const info = schemaInfo(latest?.schema);
    templates.push({
      collection: first.collection,
      name: first.template,
      latestVersion: latest?.version ?? null,
      ...info,
      versions,
    });
  }
  const registryYaml =
    yamlEntry?.type === 'blob' && yamlContent ? fileOf('registry.yaml', 'registry.yaml') : null;
  return { templates, findings, registryYaml };
}

/** The highest released version (pre-releases only when nothing else exists). */
export function latestOf(versions: readonly IndexedVersion[]): IndexedVersion | undefined {
  let best: IndexedVersion | undefined;
  let bestParsed: ReturnType<typeof tryParseVersion>;
  let bestPre = true;
  for (const v of versions) {
    const parsed = tryParseVersion(v.version);
    if (!parsed) continue;
    const pre = parsed.prerelease.length > 0;
    if (
      !best ||
      !bestParsed ||
      (bestPre && !pre) ||
      (pre === bestPre && compareVersions(parsed, bestParsed) > 0)
    ) {
      best = v;
      bestParsed = parsed;
      bestPre = pre;
    }
  }
  return best;
}
