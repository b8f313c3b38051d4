/**
 * From a snapshot to the rows of an index (docs/server.md "Indexing", docs/registry-layout.md "Digests"), pure apart
 * from reading blobs: scan the tree with the shared scanner, read only the content the store does
 * not have, compute sha256 per file and the version digest, parse schemas.
 */
import { parseYaml } from '../../../client/src/document/yaml.js';
import { compareVersions, tryParseVersion } from '../../../client/src/reference/version.js';
import { sha256Hex, versionDigest } from '../../../client/src/registry/digest.js';
import { scanRegistryTree } from '../../../client/src/registry/scan-tree.js';
import type { Finding, ScannedVersion, TemplateKind, TreeEntry } from '../../../client/src/registry/types.js';
import { gitBlobSha, type Snapshot } from '../../../client/src/source/source.js';

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

/** What the store already has, by git blob id: the sha256 and (lazily) the content. */
export interface KnownContent {
  sha256ForGitSha(gitSha: string): string | undefined;
  content(sha256: string): Buffer | undefined;
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

/** Builds the index of a snapshot, reading the blobs the store lacks in as few batches as possible. */
export async function buildIndex(snapshot: Snapshot, known: KnownContent): Promise<BuiltIndex> {
  const byPath = new Map<string, TreeEntry>();
  for (const e of snapshot.entries) byPath.set(e.path, e);

  const fetched = new Map<string, Buffer>();
  const isKnown = (e: TreeEntry): boolean => !!e.gitSha && known.sha256ForGitSha(e.gitSha) !== undefined;
  const yamlEntry = byPath.get('registry.yaml');
  if (yamlEntry?.type === 'blob' && !isKnown(yamlEntry)) {
    // registry.yaml is new: what the versions are is not known before reading it, so read, in one
    // batch, everything that may belong to a version (a superset) together with it.
    const nested = nestedRegistryDirs(snapshot.entries);
    const first = snapshot.entries.filter(
      (e) => mayBeNeeded(e) && !nested.has(e.path.split('/')[0] ?? '') && !isKnown(e),
    );
    for (const [path, content] of await snapshot.read(first)) fetched.set(path, content);
  }

  const contentOf = (path: string): Buffer | undefined => {
    const hit = fetched.get(path);
    if (hit) return hit;
    const e = byPath.get(path);
    const sha = e?.gitSha ? known.sha256ForGitSha(e.gitSha) : undefined;
    return sha ? known.content(sha) : undefined;
  };

  const yamlContent = yamlEntry?.type === 'blob' ? contentOf('registry.yaml') : undefined;
  const scan = scanRegistryTree(snapshot.entries, {
    ...(yamlContent ? { registryYaml: yamlContent.toString('utf8') } : {}),
  });

  // The content of the versions' files that the store lacks (all of it, when nothing was read yet).
  const missing: TreeEntry[] = [];
  for (const v of scan.versions) {
    for (const f of v.files) {
      if (fetched.has(f.repoPath)) continue;
      const e = byPath.get(f.repoPath);
      if (e && !isKnown(e)) missing.push(e);
    }
  }
  if (missing.length) for (const [path, content] of await snapshot.read(missing)) fetched.set(path, content);

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
    const sha = e?.gitSha ? known.sha256ForGitSha(e.gitSha) : undefined;
    if (!e?.gitSha || !sha) throw new Error(`content of ${repoPath} is unavailable`);
    return { path, sha256: sha, gitSha: e.gitSha, size: e.size ?? known.content(sha)?.length ?? 0 };
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
      let schema: unknown = null;
      if (v.schemaFile) {
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
        digest: versionDigest(files),
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
function latestOf(versions: readonly IndexedVersion[]): IndexedVersion | undefined {
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
