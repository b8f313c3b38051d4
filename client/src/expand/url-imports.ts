/**
 * Imports by URL (docs/expansion.md "Imports by URL"): `imports: [{path: https://…/lb-l3.py, name:
 * lb-l3.py}]` in a configuration or in a local template's schema, as gcloud fetched them when it
 * built a deployment's import list. The file is loaded as a plain URL reference by the sources
 * after the local one (the resolver chain: dm.lock first, the content cache, then the network),
 * so it is bounded, cached by digest and locked exactly as `type: https://…` is; here it only
 * gets its import name, and its schema and the schema's imports theirs.
 */
import { DmError } from '../error.js';
import { parseTemplateSchema } from './schema.js';
import type { LoadedTemplate, TemplateFile } from './types.js';

/** Most files one expansion imports by URL. */
export const MAX_URL_IMPORTS = 100;

/** Loads a URL as a template with its files (the resolver chain's plain URL reference). */
export type UrlImportLoader = (url: string) => Promise<LoadedTemplate | null>;

/** Whether an import path is a URL (`scheme://…`) rather than a file path. */
export function isUrlImport(path: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(path);
}

export interface UrlImport {
  url: string;
  /** The import name (the URL itself when the import has no `name:`). */
  name: string;
  /** The configuration or schema that imports it, for messages. */
  declaredIn: string;
}

/** `config.yaml: import 'https://…/lb-l3.py' (as 'lb-l3.py')`: how messages name an import by URL. */
function describe(imp: UrlImport): string {
  return `${imp.declaredIn}: import '${imp.url}'${imp.name === imp.url ? '' : ` (as '${imp.name}')`}`;
}

/** Puts a loaded import's files under their import names (names already taken stay). */
function place(imp: UrlImport, loaded: LoadedTemplate, files: Map<string, TemplateFile>): void {
  if (!files.has(imp.name)) files.set(imp.name, { name: imp.name, path: imp.url, content: loaded.content });
  if (!loaded.schema) return;
  const schemaName = `${imp.name}.schema`;
  if (!files.has(schemaName)) {
    files.set(schemaName, { name: schemaName, path: `${imp.url}.schema`, content: loaded.schema.content });
  }
  for (const child of parseTemplateSchema(loaded.schema).imports) {
    const file = loaded.files.get(child.path);
    // Beside the URL: the resolver checked that the path stays in the URL's directory.
    if (file && !files.has(child.name)) {
      files.set(child.name, {
        name: child.name,
        path: new URL(child.path, imp.url).href,
        content: file.content,
      });
    }
  }
}

/**
 * The imports by URL of one expansion: each URL loaded once, at most MAX_URL_IMPORTS of them, and
 * refused with one sentence where there is no loader (the manager API).
 */
export class UrlImports {
  private readonly loads = new Map<string, Promise<LoadedTemplate>>();

  constructor(
    private readonly loader: UrlImportLoader | undefined,
    private readonly refusal: string,
  ) {}

  /**
   * Loads `imports` (side by side) and puts each file under its import name, its schema under
   * `<name>.schema`, and the files the schema imports (beside the URL, as with a plain URL
   * reference) under their import names, unless the names are taken — in the order written; when
   * several fail, the first failure in that order is the one reported.
   */
  async addAll(imports: readonly UrlImport[], files: Map<string, TemplateFile>): Promise<void> {
    const settled = await Promise.allSettled(imports.map(async (imp) => this.load(imp)));
    for (const s of settled) if (s.status === 'rejected') throw s.reason;
    imports.forEach((imp, i) => {
      place(imp, (settled[i] as PromiseFulfilledResult<LoadedTemplate>).value, files);
    });
  }

  private load(imp: UrlImport): Promise<LoadedTemplate> {
    let pending = this.loads.get(imp.url);
    if (!pending) {
      if (!this.loader) {
        throw new DmError('URL_IMPORT_REFUSED', `${describe(imp)}: ${this.refusal}`, {
          category: 'invalid-input',
          details: { import: imp.url, in: imp.declaredIn },
        });
      }
      if (!/\.(jinja|py|yaml)$/.test(new URL(imp.url).pathname)) {
        // Locked as a plain URL reference, which names a template (docs/expansion.md "Imports by URL").
        throw new DmError(
          'URL_IMPORT_REFUSED',
          `${describe(imp)}: an import by URL must name a template file (.jinja, .py or .yaml)`,
          {
            category: 'invalid-input',
            hint: 'put other files beside the configuration and import them by path',
            details: { import: imp.url, in: imp.declaredIn },
          },
        );
      }
      if (this.loads.size >= MAX_URL_IMPORTS) {
        throw new DmError(
          'TOO_MANY_URL_IMPORTS',
          `${describe(imp)}: one expansion imports at most ${MAX_URL_IMPORTS} files by URL`,
          { category: 'limit', details: { import: imp.url, in: imp.declaredIn } },
        );
      }
      pending = this.fetch(imp, this.loader);
      this.loads.set(imp.url, pending);
    }
    return pending;
  }

  private async fetch(imp: UrlImport, loader: UrlImportLoader): Promise<LoadedTemplate> {
    let loaded: LoadedTemplate | null;
    try {
      loaded = await loader(imp.url);
    } catch (error) {
      if (!(error instanceof DmError)) throw error;
      // The same code and category, with the import and the file that names it in front.
      throw new DmError(error.code, `${describe(imp)}: ${error.message}`, {
        category: error.category as never,
        ...(error.hint ? { hint: error.hint } : {}),
        details: { ...error.details, import: imp.url, in: imp.declaredIn },
      });
    }
    if (!loaded) {
      throw new DmError('URL_IMPORT_REFUSED', `${describe(imp)}: ${this.refusal}`, {
        category: 'invalid-input',
        details: { import: imp.url, in: imp.declaredIn },
      });
    }
    return loaded;
  }
}
