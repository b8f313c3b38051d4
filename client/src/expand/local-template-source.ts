/**
 * The local TemplateSource (docs/expansion.md, "Configurations and expansion"): templates from the configuration's `imports`,
 * plus the automatic imports DM's client made — a type naming a file present next to the
 * configuration or in `--imports-dir`, that file's `<file>.schema`, and the schema's own
 * `imports`, recursively. Files never come from outside those directories.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { DmError, fromSystemError } from '../error.js';
import { parseTemplateSchema } from './schema.js';
import type { LoadedTemplate, TemplateFile, TemplateKind, TemplateSource } from './types.js';
import { isUrlImport, type UrlImport, type UrlImportLoader, UrlImports } from './url-imports.js';

export interface ImportEntry {
  path: string;
  name: string;
}

export interface LocalTemplateSourceOptions {
  /** The directory of the configuration: import paths are relative to it. */
  baseDir: string;
  /** `--imports-dir`: a second place where types and imports are looked up. */
  importsDir?: string;
  /** The configuration's `imports`. */
  imports?: readonly ImportEntry[];
  /** Largest file read, in bytes (default 4 MiB). */
  maxFileBytes?: number;
  /**
   * Relative imports may climb with `../` up to this directory (default: the nearest of
   * findProjectRoots(baseDir) that encloses the imported file). Never above it, never absolute.
   */
  projectRoot?: string;
  /** The configuration, as messages name it (imports by URL). */
  configuration?: string;
  /**
   * Loads an import given by URL (docs/expansion.md "Imports by URL"); absent: such an import is
   * refused with `refuseUrlImports` (or a default sentence).
   */
  loadUrl?: UrlImportLoader;
  /** Why imports by URL are refused where there is no `loadUrl`. */
  refuseUrlImports?: string;
}

/**
 * The possible project roots of a configuration on the user's disk, nearest first: walking up from
 * its directory, every directory that has a `.git` or a `dm.lock`, or is the current directory. A
 * `../` import is read from the nearest of them that encloses both the configuration and the
 * imported file. Without any, only the configuration's own directory (no `../` imports then).
 */
export function findProjectRoots(baseDir: string, cwd: string = process.cwd()): string[] {
  const start = resolve(baseDir);
  const here = resolve(cwd);
  const roots: string[] = [];
  for (let dir = start; ; ) {
    if (dir === here || existsSync(join(dir, '.git')) || existsSync(join(dir, 'dm.lock'))) roots.push(dir);
    const parent = dirname(dir);
    if (parent === dir) return roots.length ? roots : [start];
    dir = parent;
  }
}

/** The kind of template a file name denotes, or undefined when it is not a template file. */
export function templateKindOf(name: string): TemplateKind | undefined {
  if (name.endsWith('.py')) return 'python';
  if (name.endsWith('.jinja') || name.endsWith('.yaml') || name.endsWith('.yml')) return 'jinja';
  return undefined;
}

/** A path as messages show it: relative to the current directory when inside it. */
function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** `--imports-dir` must name a directory: a typo would otherwise just find nothing there. */
function checkImportsDir(dir: string): void {
  const shown = `--imports-dir '${dir}'`;
  let directory: boolean;
  try {
    directory = statSync(resolve(dir)).isDirectory();
  } catch (error) {
    throw fromSystemError(error, shown) ?? error;
  }
  if (!directory) throw new DmError('NOT_A_DIRECTORY', `${shown} is not a directory`, { category: 'usage' });
}

export class LocalTemplateSource implements TemplateSource {
  readonly files = new Map<string, TemplateFile>();
  private readonly roots: string[];
  private readonly loaded = new Map<string, LoadedTemplate>();
  private readonly mine = new WeakSet<LoadedTemplate>();
  private readonly maxFileBytes: number;
  private readonly projectRoots: string[];
  private readonly urlImports: UrlImports;
  /** Whether imports by URL are fetched (else one is read by its name beside the configuration, or refused). */
  private readonly fetchesUrls: boolean;
  /** The configuration's imports by URL, loaded by `ready()`. */
  private readonly pendingUrls: UrlImport[] = [];
  /** Import names whose file came from a URL: their schema is only the one beside the URL. */
  private readonly fromUrl = new Set<string>();
  /** Paths looked up for a type and not found (absentFiles). */
  private readonly absent = new Set<string>();

  constructor(options: LocalTemplateSourceOptions) {
    this.fetchesUrls = options.loadUrl !== undefined;
    this.urlImports = new UrlImports(
      options.loadUrl,
      options.refuseUrlImports ?? 'imports by URL are not fetched here',
    );
    if (options.importsDir) checkImportsDir(options.importsDir);
    this.roots = [resolve(options.baseDir), ...(options.importsDir ? [resolve(options.importsDir)] : [])];
    this.projectRoots = options.projectRoot
      ? [resolve(options.projectRoot)]
      : findProjectRoots(options.baseDir);
    this.maxFileBytes = options.maxFileBytes ?? 4 * 1024 * 1024;
    for (const entry of options.imports ?? []) {
      if (isUrlImport(entry.path)) {
        if (this.sentByName(entry.name)) continue;
        this.pendingUrls.push({
          url: entry.path,
          name: entry.name,
          declaredIn: options.configuration ?? 'the configuration',
        });
        this.fromUrl.add(entry.name);
        continue;
      }
      // The service knows a sent file by its import name, as DM's server did (gcloud's upload).
      if (entry.name !== entry.path && this.sentByName(entry.name)) continue;
      const file = this.readRelative(entry.path, this.roots);
      if (!file) {
        throw new DmError(
          'IMPORT_NOT_FOUND',
          `import '${entry.path}' not found (looked in ${this.roots.join(', ')})`,
          {
            category: 'not-found',
            details: { import: entry.path },
          },
        );
      }
      this.files.set(entry.name, { name: entry.name, path: file.path, content: file.content });
    }
  }

  /**
   * Where nothing fetches URLs (the manager API), an import is the file sent under its import name
   * beside the configuration, as DM's server took gcloud's uploads (docs/expansion.md "Imports by
   * URL"; docs/manager.md "Imports"): an import by URL, and a renamed import whose path was not sent.
   */
  private sentByName(name: string): boolean {
    if (this.fetchesUrls || isUrlImport(name)) return false;
    let file: { path: string; content: string } | undefined;
    try {
      file = this.readRelative(name, [this.roots[0]!]);
    } catch {
      return false;
    }
    if (!file) return false;
    this.files.set(name, { name, path: file.path, content: file.content });
    return true;
  }

  /**
   * Where a type naming a template file was looked for and not found (it stayed a primitive): a
   * file added there later changes the expansion (install's discovery cache keys on it).
   */
  absentFiles(): string[] {
    return [...this.absent].sort();
  }

  /** The files read from disk so far (not those fetched from a URL). */
  localFiles(): string[] {
    return [...new Set([...this.files.values()].map((f) => f.path).filter((p) => !isUrlImport(p)))].sort();
  }

  /** Loads the configuration's imports by URL (before the first `load`). */
  async ready(): Promise<void> {
    await this.urlImports.addAll(this.pendingUrls, this.files);
  }

  private readRelative(
    path: string,
    roots: readonly string[],
  ): { path: string; content: string } | undefined {
    if (isAbsolute(path)) {
      throw new DmError('IMPORT_OUTSIDE', `import '${path}' must be a relative path, not an absolute one`, {
        category: 'invalid-input',
      });
    }
    // `../` may climb up to the project root (DM's public samples import shared files so).
    const climbs = normalize(path).split(/[\\/]/).includes('..');
    for (const root of roots) {
      const full = resolve(root, path);
      const fence = climbs
        ? this.projectRoots.find((r) => inside(r, full))
        : inside(root, full)
          ? root
          : undefined;
      if (fence === undefined) {
        if (!climbs) continue;
        const outermost = this.projectRoots[this.projectRoots.length - 1];
        throw new DmError(
          'IMPORT_OUTSIDE',
          `import '${path}' leads outside the project root ${outermost} (walking up from the configuration: a directory with a .git or a dm.lock, or the current directory)`,
          { category: 'invalid-input', details: { import: path, projectRoot: outermost } },
        );
      }
      let size: number;
      try {
        const st = statSync(full);
        if (!st.isFile()) continue;
        size = st.size;
        // A symbolic link must not lead outside the project root either.
        const real = realpathSync(full);
        if (![fence, root, this.projectRoots[0]].some((r) => inside(realpathSync(r as string), real))) {
          throw new DmError('IMPORT_OUTSIDE', `'${path}' links to a file outside ${fence}`, {
            category: 'blocked',
          });
        }
      } catch (error) {
        if (error instanceof DmError) throw error;
        continue;
      }
      if (size > this.maxFileBytes) {
        throw new DmError(
          'IMPORT_TOO_LARGE',
          `import '${path}' is ${size} bytes, more than ${this.maxFileBytes}`,
          {
            category: 'limit',
          },
        );
      }
      return { path: full, content: readFileSync(full, 'utf8') };
    }
    return undefined;
  }

  /** Adds `<name>.schema` and the schema's imports, when they exist, to the files. */
  private async addSchemaOf(name: string, templatePath: string): Promise<TemplateFile | undefined> {
    const schemaName = `${name}.schema`;
    let schema = this.files.get(schemaName);
    if (!schema) {
      // A file imported by URL has the schema beside its URL or none (url-imports.ts).
      if (this.fromUrl.has(name)) return undefined;
      // gcloud uploaded the schema beside an import's path under the import's name: an import
      // `{path: sub/t.py, name: my-t.py}` has the schema sub/t.py.schema (docs/expansion.md, "Schemas").
      const next =
        this.readNextTo(templatePath, `${basename(templatePath)}.schema`) ??
        this.readRelative(schemaName, this.roots) ??
        this.readNextTo(templatePath, schemaName);
      if (!next) return undefined;
      schema = { name: schemaName, path: next.path, content: next.content };
      this.files.set(schemaName, schema);
    }
    // A schema fetched with an import by URL brought its imports along (url-imports.ts).
    if (isUrlImport(schema.path)) return schema;
    const parsed = parseTemplateSchema(schema);
    const schemaDir = dirname(schema.path);
    const byUrl: UrlImport[] = [];
    for (const imp of parsed.imports) {
      if (this.files.has(imp.name)) continue;
      if (isUrlImport(imp.path)) {
        if (this.sentByName(imp.name)) continue;
        // As gcloud did: fetched when the import list is built (docs/expansion.md "Imports by URL").
        byUrl.push({
          url: imp.path,
          name: imp.name,
          declaredIn: shortPath(schema.path),
        });
        this.fromUrl.add(imp.name);
        continue;
      }
      if (/:=?v\d/.test(imp.path)) continue; // registry references: another source's
      if (imp.name !== imp.path && this.sentByName(imp.name)) continue;
      const file = this.readRelative(imp.path, [schemaDir, ...this.roots]);
      if (!file) {
        throw new DmError('IMPORT_NOT_FOUND', `${schema.path}: import '${imp.path}' not found`, {
          category: 'not-found',
          details: { schema: schema.path, import: imp.path },
        });
      }
      this.files.set(imp.name, { name: imp.name, path: file.path, content: file.content });
    }
    await this.urlImports.addAll(byUrl, this.files);
    return schema;
  }

  private readNextTo(templatePath: string, name: string): { path: string; content: string } | undefined {
    const dir = dirname(templatePath);
    // The template was read from within these (a `../` import from within a project root).
    if (![...this.roots, ...this.projectRoots].some((root) => inside(root, dir))) return undefined;
    const base = name.split('/').pop() ?? name;
    return this.readRelative(base, [dir]);
  }

  async load(typeRef: string, from?: LoadedTemplate): Promise<LoadedTemplate | null> {
    if (from && !this.mine.has(from)) return null;
    const kind = templateKindOf(typeRef);
    if (!kind) return null;
    const cached = this.loaded.get(typeRef);
    if (cached) return cached;
    let file = this.files.get(typeRef);
    if (!file) {
      if (/^[a-z]+:\/\//i.test(typeRef)) return null;
      let found: { path: string; content: string } | undefined;
      try {
        found = this.readRelative(typeRef, this.roots);
      } catch {
        return null;
      }
      if (!found) {
        if (!isAbsolute(typeRef)) for (const root of this.roots) this.absent.add(resolve(root, typeRef));
        return null;
      }
      file = { name: typeRef, path: found.path, content: found.content };
      this.files.set(typeRef, file);
    }
    const schema = await this.addSchemaOf(typeRef, file.path);
    const template: LoadedTemplate = {
      type: typeRef,
      path: isUrlImport(file.path) ? file.path : relative(process.cwd(), file.path) || file.path,
      kind,
      content: file.content,
      ...(schema ? { schema } : {}),
      files: this.files,
      // Content fetched from a URL keeps the strictness of fetched content (docs/expansion.md).
      ...(this.fromUrl.has(typeRef) ? {} : { ownFile: true }),
    };
    this.mine.add(template);
    this.loaded.set(typeRef, template);
    return template;
  }
}

/** Tries each source in order; the first that knows the type wins. */
export function chainTemplateSources(sources: readonly TemplateSource[]): TemplateSource {
  return {
    async load(typeRef, from) {
      for (const source of sources) {
        const loaded = await source.load(typeRef, from);
        if (loaded) return loaded;
      }
      return null;
    },
  };
}

/**
 * A source made on its first use: a configuration whose templates are all local never builds
 * what `make` builds (for `dm expand`, the resolver chain and its modules).
 */
export function lazyTemplateSource(make: () => Promise<TemplateSource>): TemplateSource {
  let made: Promise<TemplateSource> | undefined;
  return {
    async load(typeRef, from) {
      made ??= make();
      return (await made).load(typeRef, from);
    },
  };
}
