/**
 * The registry layout scanner (docs/registry-layout.md; rules and choices in
 * docs/registry-layout.md). Pure: it sees the paths of a repository tree, as git, GitHub's trees
 * API or a directory walk give them, plus the text of `registry.yaml`, and returns collections,
 * templates, the valid versions with their files, and findings with stable codes. It never throws
 * on any input and its result does not depend on the order of the entries.
 *
 * How a tree is read:
 * - The root is the unnamed collection. Each top-level directory is, in this order: a collection
 *   that registry.yaml maps there; a directory on the way to one (not scanned itself); a nested
 *   registry (it holds its own registry.yaml; skipped); a template of the root collection (it has a
 *   child directory named `v<digit>…`); ignored (no subdirectories, e.g. `docs/`); a collection
 *   named like registry.yaml lists (shadowed: not served); or the collection of the same name.
 * - A collection's child directories are templates; a template's child directories named
 *   `v<digit>…` are versions; every file below a version directory belongs to the version. The
 *   scan goes no deeper than collection/template/version.
 * - Names starting with `.` (`.git`, `.github`) are ignored at the collection and template levels.
 */
import { isValidName } from '../reference/reference.js';
import { compareVersions, parseVersion, tryParseVersion, type Version } from '../reference/version.js';
import { DEFAULT_SOURCE_LIMITS } from '../source/source.js';
import { comparePaths } from './compare-paths.js';
import { pathProblem, printable } from './content-names.js';
import { FINDING_CODES, type FindingCode } from './finding-codes.js';
import { parseRegistryYaml, REGISTRY_YAML } from './registry-yaml.js';
import type {
  Finding,
  ScannedCollection,
  ScannedTemplate,
  ScannedVersion,
  ScanResult,
  TemplateKind,
  TreeEntry,
  VersionFile,
} from './types.js';

export interface ScanOptions {
  /** The text of `registry.yaml` at the repository root, when the tree has one. */
  registryYaml?: string | undefined;
  /** Most files a served version may hold (default: the sources' bound, DEFAULT_SOURCE_LIMITS). */
  maxVersionFiles?: number | undefined;
}

interface FileNode {
  size?: number;
  gitSha?: string;
}

interface DirNode {
  path: string;
  dirs: Map<string, DirNode>;
  files: Map<string, FileNode>;
}

/** A directory name that is meant as a version: `v` followed by a digit. */
const VERSION_LIKE = /^v[0-9]/;
const TEMPLATE_EXTENSIONS: readonly [string, TemplateKind][] = [
  ['.jinja', 'jinja'],
  ['.py', 'python'],
];
const BLUEPRINT_FILE = 'blueprint.yaml';
const EXAMPLE_FILE = 'example.yaml';
const SCHEMA_SUFFIX = '.schema';

function join(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}

function isHidden(name: string): boolean {
  return name.startsWith('.');
}

/** A path no git tree can hold: empty, or with an empty, `.` or `..` segment, or a NUL. */
const BAD_PATH = /(?:^|\/)\.{0,2}(?:\/|$)|\0/;

function isTreePath(path: unknown): path is string {
  return typeof path === 'string' && !BAD_PATH.test(path);
}

function newDir(path: string): DirNode {
  return { path, dirs: new Map(), files: new Map() };
}

/** The same blob listed twice keeps one description, the same whatever the order. */
function fileKey(f: FileNode): string {
  return `${f.gitSha ?? ''}\0${f.size ?? ''}`;
}

/**
 * The part of `path` up to its first segment the content rule refuses (a backslash, a control
 * character: client/src/registry/content-names.ts), or undefined when every segment passes.
 */
function unsafePrefix(path: string): string | undefined {
  if (pathProblem(path) === undefined) return undefined;
  const segments = path.split('/');
  for (let i = 0; i < segments.length; i++) {
    const prefix = segments.slice(0, i + 1).join('/');
    if (pathProblem(segments[i]) !== undefined) return prefix;
  }
  return path;
}

/**
 * Builds the directory tree. A path that is both a file and a directory is a directory. A path
 * the content rule refuses is left out, its first refused part recorded in `unsafe`.
 */
function buildTree(entries: readonly TreeEntry[], unsafe: Set<string>): DirNode {
  const root = newDir('');
  const byPath = new Map<string, DirNode>([['', root]]);
  const ensureDir = (path: string): DirNode => {
    let node = byPath.get(path);
    if (node) return node;
    const slash = path.lastIndexOf('/');
    const parent = ensureDir(slash < 0 ? '' : path.slice(0, slash));
    node = newDir(path);
    parent.dirs.set(path.slice(slash + 1), node);
    byPath.set(path, node);
    return node;
  };
  for (const entry of entries) {
    if (typeof entry !== 'object' || entry === null || !isTreePath(entry.path)) continue;
    const refused = unsafePrefix(entry.path);
    if (refused !== undefined) {
      unsafe.add(refused);
      continue;
    }
    if (entry.type === 'tree') {
      ensureDir(entry.path);
    } else if (entry.type === 'blob') {
      const slash = entry.path.lastIndexOf('/');
      const parent = ensureDir(slash < 0 ? '' : entry.path.slice(0, slash));
      const name = entry.path.slice(slash + 1);
      const file: FileNode = {};
      if (typeof entry.size === 'number') file.size = entry.size;
      if (typeof entry.gitSha === 'string') file.gitSha = entry.gitSha;
      const existing = parent.files.get(name);
      if (!existing || fileKey(file) < fileKey(existing)) parent.files.set(name, file);
    }
  }
  for (const node of byPath.values()) {
    for (const name of node.dirs.keys()) node.files.delete(name);
  }
  return root;
}

function lookup(root: DirNode, path: string): DirNode | undefined {
  let node: DirNode | undefined = root;
  for (const s of path.split('/')) node = node?.dirs.get(s);
  return node;
}

function sortedNames<T>(map: Map<string, T>): string[] {
  return [...map.keys()].sort(comparePaths);
}

function listFiles(dir: DirNode, prefix: string, out: VersionFile[]): void {
  for (const name of sortedNames(dir.files)) {
    const file = dir.files.get(name)!;
    const path = join(prefix, name);
    const entry: VersionFile = { path, repoPath: join(dir.path, name) };
    if (file.size !== undefined) entry.size = file.size;
    if (file.gitSha !== undefined) entry.gitSha = file.gitSha;
    out.push(entry);
  }
  for (const name of sortedNames(dir.dirs)) listFiles(dir.dirs.get(name)!, join(prefix, name), out);
}

/** parseVersion's explanation, e.g. "'v01' is not a valid version: a numeric part has a leading zero". */
function whyNotAVersion(name: string): string {
  try {
    parseVersion(name);
  } catch (error) {
    if (error instanceof Error) return error.message;
  }
  return `'${name}' is not a valid version`;
}

interface TemplateSite {
  collection: string;
  name: string;
  dir: DirNode;
}

class Scanner {
  /** Directories holding a path the content rule refused: no version among them is served. */
  readonly unsafeDirs = new Set<string>();
  readonly findings: Finding[] = [];
  readonly versions: ScannedVersion[] = [];
  readonly templates: ScannedTemplate[] = [];
  /** The parsed version of each served version, for sorting. */
  readonly order = new Map<ScannedVersion, Version>();

  constructor(readonly maxVersionFiles: number) {}

  add(code: FindingCode, path: string, message: string, extra: Partial<Finding> = {}): void {
    this.findings.push({ code, severity: FINDING_CODES[code].severity, path, message, ...extra });
  }

  scanTemplate(site: TemplateSite): void {
    const { collection, name, dir } = site;
    const where = { collection, template: name };
    if (!isValidName(name)) {
      this.add(
        'INVALID_NAME',
        dir.path,
        `template directory '${dir.path}': name '${name}' does not match [A-Za-z0-9][A-Za-z0-9._-]* (at most 100 characters); skipped`,
        where,
      );
      return;
    }
    this.templates.push({ collection, name, path: dir.path });

    const parsed: { version: Version; dir: DirNode }[] = [];
    let versionLike = 0;
    for (const child of sortedNames(dir.dirs)) {
      const childDir = dir.dirs.get(child)!;
      if (isHidden(child)) continue;
      if (!VERSION_LIKE.test(child)) {
        this.add(
          'NOT_A_VERSION_DIR',
          childDir.path,
          `'${childDir.path}' is not a version directory (versions are named v<MAJOR>[.MINOR[.PATCH]]); ignored`,
          where,
        );
        continue;
      }
      versionLike++;
      const version = tryParseVersion(child);
      if (!version) {
        this.add('INVALID_VERSION_DIR', childDir.path, `${whyNotAVersion(child)}; skipped`, {
          ...where,
          version: child,
        });
        continue;
      }
      parsed.push({ version, dir: childDir });
    }
    if (versionLike === 0 && collection !== '') {
      this.add('NO_VERSIONS', dir.path, `template directory '${dir.path}' holds no version directory`, where);
    }

    // Same version, different directories (v1 / v1.0.0, or differing only in build metadata).
    const groups = new Map<string, { version: Version; dir: DirNode }[]>();
    for (const p of parsed) {
      const key = `${p.version.major}.${p.version.minor}.${p.version.patch}-${p.version.prerelease.join('.')}`;
      groups.set(key, [...(groups.get(key) ?? []), p]);
    }
    for (const group of groups.values()) {
      if (group.length > 1) {
        const dirs = group.map((g) => g.dir.path).sort(comparePaths);
        this.add(
          'DUPLICATE_VERSION',
          dir.path,
          `${dirs.map((d) => `'${d}'`).join(' and ')} denote the same version; neither is served`,
          { ...where, related: dirs },
        );
        continue;
      }
      this.scanVersion(site, group[0]!.version, group[0]!.dir);
    }
  }

  scanVersion(site: TemplateSite, version: Version, dir: DirNode): void {
    const where = { collection: site.collection, template: site.name, version: version.raw };
    // A file the rule refused is not served, so neither is the version it belongs to (its
    // UNSAFE_PATH finding says so).
    if (this.unsafeDirs.has(dir.path)) return;
    const files = sortedNames(dir.files);
    const fileSet = new Set(files);
    const candidates: [string, TemplateKind][] = [];
    for (const [ext, kind] of TEMPLATE_EXTENSIONS) {
      if (fileSet.has(site.name + ext)) candidates.push([site.name + ext, kind]);
    }
    if (fileSet.has(BLUEPRINT_FILE)) candidates.push([BLUEPRINT_FILE, 'blueprint']);
    let ok = true;
    let template: [string, TemplateKind] | undefined;
    if (candidates.length > 1) {
      ok = false;
      this.add(
        'TWO_TEMPLATE_FILES',
        dir.path,
        `'${dir.path}' has ${candidates.map(([f]) => f).join(' and ')}: a version holds exactly one template file; skipped`,
        where,
      );
    } else if (candidates.length === 0) {
      ok = false;
      const others = files.filter((f) => TEMPLATE_EXTENSIONS.some(([ext]) => f.endsWith(ext)));
      if (others.length === 1) {
        const ext = TEMPLATE_EXTENSIONS.find(([e]) => others[0]!.endsWith(e))![0];
        this.add(
          'TEMPLATE_NAME_MISMATCH',
          join(dir.path, others[0]!),
          `'${others[0]}' in '${dir.path}' must be named after its template directory: ${site.name}${ext}; skipped`,
          where,
        );
      } else {
        const found = others.length ? ` (found ${others.join(', ')}, none named after the template)` : '';
        this.add(
          'NO_TEMPLATE_FILE',
          dir.path,
          `'${dir.path}' has no ${site.name}.jinja, ${site.name}.py or ${BLUEPRINT_FILE}${found}; skipped`,
          where,
        );
      }
    } else {
      template = candidates[0];
    }

    let schemaFile: string | undefined;
    if (template) {
      const expected = template[0] + SCHEMA_SUFFIX;
      for (const f of files) {
        if (!f.endsWith(SCHEMA_SUFFIX)) continue;
        if (f === expected) {
          schemaFile = f;
        } else if (!fileSet.has(f.slice(0, -SCHEMA_SUFFIX.length))) {
          ok = false;
          this.add(
            'SCHEMA_NAME_MISMATCH',
            join(dir.path, f),
            `schema '${f}' in '${dir.path}' must be named ${expected} after the template file; skipped`,
            where,
          );
        }
      }
    }

    const hasExample = fileSet.has(EXAMPLE_FILE);
    if (!hasExample && template?.[1] !== 'blueprint') {
      this.add(
        'MISSING_EXAMPLE',
        dir.path,
        `'${dir.path}' has no ${EXAMPLE_FILE} (a configuration that deploys one instance)`,
        where,
      );
    }
    if (!ok || !template) return;

    const versionFiles: VersionFile[] = [];
    listFiles(dir, '', versionFiles);
    if (versionFiles.length > this.maxVersionFiles) {
      this.add(
        'VERSION_TOO_MANY_FILES',
        dir.path,
        `'${dir.path}' holds ${versionFiles.length} files, more than the ${this.maxVersionFiles} a version may hold; skipped`,
        where,
      );
      return;
    }
    const scanned: ScannedVersion = {
      collection: site.collection,
      template: site.name,
      version: version.raw,
      dir: dir.path,
      kind: template[1],
      templateFile: template[0],
      hasExample,
      files: versionFiles,
    };
    if (schemaFile !== undefined) scanned.schemaFile = schemaFile;
    this.versions.push(scanned);
    this.order.set(scanned, version);
  }
}

/** Scans a repository tree; see the module comment and docs/registry-layout.md. */
export function scanRegistryTree(entries: readonly TreeEntry[], options: ScanOptions = {}): ScanResult {
  const unsafe = new Set<string>();
  const root = buildTree(Array.isArray(entries) ? entries : [], unsafe);
  const scanner = new Scanner(options.maxVersionFiles ?? DEFAULT_SOURCE_LIMITS.maxVersionFiles);
  for (const path of unsafe) {
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) scanner.unsafeDirs.add(segments.slice(0, i).join('/'));
  }
  const registryYaml = parseRegistryYaml(
    typeof options.registryYaml === 'string' ? options.registryYaml : undefined,
  );
  scanner.findings.push(...registryYaml.findings);

  // Collections registry.yaml maps, where the directories exist.
  const mapped = new Map<string, DirNode>();
  for (const m of registryYaml.collections) {
    const dir = lookup(root, m.path);
    if (!dir) {
      scanner.add(
        'REGISTRY_YAML_MISSING_PATH',
        REGISTRY_YAML,
        `${REGISTRY_YAML}: collection '${m.name}' maps to '${m.path}', which is not a directory of the repository`,
        { collection: m.name, related: [m.path] },
      );
      continue;
    }
    mapped.set(m.name, dir);
  }
  const mappedPaths = registryYaml.claimedPaths;
  const onTheWay = new Set<string>();
  for (const p of mappedPaths) {
    const segments = p.split('/');
    for (let i = 1; i < segments.length; i++) onTheWay.add(segments.slice(0, i).join('/'));
  }
  /**
   * A directory registry.yaml names (even in an entry with an error), or one on the way to such a
   * directory, is never scanned as a template or a default collection.
   */
  const reserved = (path: string) => mappedPaths.has(path) || onTheWay.has(path);

  const collections: ScannedCollection[] = [{ name: '', path: '' }];
  const sites: TemplateSite[] = [];
  const nestedRegistries: string[] = [];
  const defaultCollections = new Map<string, DirNode>();

  for (const name of sortedNames(root.dirs)) {
    const dir = root.dirs.get(name)!;
    if (isHidden(name) || reserved(dir.path)) continue;
    if (dir.files.has(REGISTRY_YAML)) {
      nestedRegistries.push(dir.path);
      continue;
    }
    const children = sortedNames(dir.dirs).filter((c) => !isHidden(c));
    if (children.some((c) => VERSION_LIKE.test(c))) {
      sites.push({ collection: '', name, dir });
      continue;
    }
    if (children.length === 0) continue;
    if (registryYaml.listedNames.has(name)) {
      const target = mapped.get(name);
      if (target) {
        scanner.add(
          'SHADOWED_DIRECTORY',
          dir.path,
          `'${dir.path}' is not served: ${REGISTRY_YAML} maps collection '${name}' to '${target.path}'`,
          { collection: name },
        );
      }
      continue;
    }
    if (!isValidName(name)) {
      scanner.add(
        'INVALID_NAME',
        dir.path,
        `collection directory '${dir.path}': name '${name}' does not match [A-Za-z0-9][A-Za-z0-9._-]* (at most 100 characters); skipped`,
        { collection: name },
      );
      continue;
    }
    defaultCollections.set(name, dir);
  }

  const named = [...mapped, ...defaultCollections].sort(([a], [b]) => comparePaths(a, b));
  for (const [name, dir] of named) {
    collections.push({ name, path: dir.path });
    for (const child of sortedNames(dir.dirs)) {
      const childDir = dir.dirs.get(child)!;
      if (isHidden(child) || reserved(childDir.path)) continue;
      sites.push({ collection: name, name: child, dir: childDir });
    }
  }
  for (const site of sites) scanner.scanTemplate(site);
  // Refused paths, but those inside a nested registry (its own lint reports them).
  for (const path of unsafe) {
    if (nestedRegistries.some((n) => path.startsWith(`${n}/`))) continue;
    scanner.add(
      'UNSAFE_PATH',
      path,
      `'${printable(path)}': ${pathProblem(path.slice(path.lastIndexOf('/') + 1)) ?? 'not a plain path'}, which not every system can hold as a file name; not served, nor the version holding it (the rest is indexed)`,
    );
  }

  const versionOrder = scanner.order;
  scanner.versions.sort(
    (a, b) =>
      comparePaths(a.collection, b.collection) ||
      comparePaths(a.template, b.template) ||
      compareVersions(versionOrder.get(a)!, versionOrder.get(b)!) ||
      comparePaths(a.version, b.version),
  );
  scanner.templates.sort((a, b) => comparePaths(a.collection, b.collection) || comparePaths(a.name, b.name));
  scanner.findings.sort(
    (a, b) =>
      comparePaths(a.path, b.path) || comparePaths(a.code, b.code) || comparePaths(a.message, b.message),
  );
  const result: ScanResult = {
    collections,
    templates: scanner.templates,
    versions: scanner.versions,
    findings: scanner.findings,
    nestedRegistries,
  };
  if (registryYaml.name !== undefined) result.registryName = registryYaml.name;
  return result;
}
