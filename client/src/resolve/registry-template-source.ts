/**
 * Templates by registry reference and plain URL, for the expansion engine (its TemplateSource
 * seam, docs/expansion.md "Template sources"): `type: github.com/o/r/redis:v1.0` or `type: https://…/x.jinja` is
 * resolved through the resolver chain (dm.lock first when there is one) in a resolution session,
 * its files come from the content cache or the source (verified by digest), and names inside the version (`helpers/common.jinja`, another template of
 * the same version) resolve against that version's own files.
 */
import { DmError } from '../error.js';
import { parseTemplateSchema } from '../expand/schema.js';
import type { LoadedTemplate, TemplateFile, TemplateSource } from '../expand/types.js';
import { isUrlImport } from '../expand/url-imports.js';
import { ContentCache } from '../fetch/content-cache.js';
import { type DefaultRegistry, parseReference } from '../reference/reference.js';
import { ResolutionSession } from './resolution-session.js';
import type { Resolver } from './resolver.js';
import type { ResolvedVersion } from './types.js';

export type RegistryTemplateSourceOptions = {
  defaultRegistry?: DefaultRegistry | undefined;
} & (
  | {
      /** The command's resolutions, shared (dm install's own, so emitted references resolve as its others). */
      session: ResolutionSession;
    }
  | {
      chain: readonly Resolver[];
      cacheRoot: string;
      offline?: boolean;
      warn?: (message: string) => void;
    }
);

const TEMPLATE_FILE = /\.(jinja|py)$/;

export class RegistryTemplateSource implements TemplateSource {
  private readonly session: ResolutionSession;
  private readonly loaded = new Map<string, Promise<LoadedTemplate | null>>();
  /** Templates this source loaded, with the version they came from. */
  private readonly origin = new WeakMap<LoadedTemplate, ResolvedVersion>();
  /** Every reference resolved, canonical → resolution (for manifests and lock checks). */
  readonly resolved = new Map<string, ResolvedVersion>();

  constructor(private readonly options: RegistryTemplateSourceOptions) {
    this.session =
      'session' in options
        ? options.session
        : new ResolutionSession({
            chain: options.chain,
            cache: new ContentCache({ root: options.cacheRoot, warn: options.warn }),
            offline: Boolean(options.offline),
          });
  }

  async load(typeRef: string, from?: LoadedTemplate): Promise<LoadedTemplate | null> {
    const version = from ? this.origin.get(from) : undefined;
    if (version && from && TEMPLATE_FILE.test(typeRef) && from.files.has(typeRef)) {
      return this.sibling(typeRef, from, version);
    }
    if (!typeRef.includes(':')) return null;
    let ref: ReturnType<typeof parseReference>;
    try {
      ref = parseReference(typeRef, { defaultRegistry: this.options.defaultRegistry });
    } catch (error) {
      if (error instanceof DmError && error.code === 'MISSING_DEFAULT_REGISTRY') throw error;
      return null; // not a reference: a primitive type such as apps/v1:Deployment is someone else's
    }
    const key = ref.kind === 'url' ? ref.url : typeRef;
    let pending = this.loaded.get(key);
    if (!pending) {
      pending = this.loadReference(typeRef, ref);
      this.loaded.set(key, pending);
    }
    return pending;
  }

  private async loadReference(
    typeRef: string,
    ref: ReturnType<typeof parseReference>,
  ): Promise<LoadedTemplate> {
    const resolved = (await this.session.resolve([ref]))[0]!;
    this.resolved.set(resolved.reference, resolved);
    if (resolved.kind === 'blueprint') {
      throw new DmError('NOT_A_TEMPLATE', `${typeRef} is a blueprint; use dm blueprint render`, {
        category: 'invalid-input',
      });
    }
    const contents = await this.session.contents(resolved);
    const where = ref.kind === 'url' ? ref.url : `${resolved.template}:${resolved.version}`;
    const files = new Map<string, TemplateFile>();
    for (const [path, data] of contents)
      files.set(path, { name: path, path: `${where}/${path}`, content: data.toString('utf8') });
    const template = this.templateFrom(typeRef, where, resolved.templateFile, files, resolved);
    return template;
  }

  private sibling(name: string, from: LoadedTemplate, version: ResolvedVersion): LoadedTemplate {
    const where = from.path.slice(0, from.path.length - (from.path.split('/').at(-1)?.length ?? 0) - 1);
    return this.templateFrom(name, where || from.path, name, from.files, version);
  }

  private templateFrom(
    type: string,
    where: string,
    fileName: string,
    files: Map<string, TemplateFile>,
    version: ResolvedVersion,
  ): LoadedTemplate {
    const file = files.get(fileName);
    if (!file) {
      throw new DmError('TEMPLATE_FILE_MISSING', `${where} has no file ${fileName}`, {
        category: 'not-found',
      });
    }
    const schema = files.get(`${fileName}.schema`);
    if (schema?.content.includes('://')) refuseUrlImports(schema);
    const template: LoadedTemplate = {
      type,
      path: `${where}/${fileName}`,
      kind: fileName.endsWith('.py') ? 'python' : 'jinja',
      content: file.content,
      ...(schema ? { schema } : {}),
      files,
    };
    this.origin.set(template, version);
    return template;
  }
}

/**
 * A registry version is exactly its files, pinned by their digests: an import by URL in its schema
 * is not fetched (docs/expansion.md "Imports by URL"), and says so rather than leave the type it
 * names a primitive.
 */
function refuseUrlImports(schema: TemplateFile): void {
  const byUrl = parseTemplateSchema(schema).imports.find((i) => isUrlImport(i.path));
  if (!byUrl) return;
  throw new DmError(
    'URL_IMPORT_REFUSED',
    `${schema.path}: import '${byUrl.path}' is a URL; content from a registry sees only its own files, so dm does not fetch it`,
    { category: 'invalid-input', hint: 'publish the file in the version and import it by its path' },
  );
}

export interface CreateTemplateSourceOptions {
  config: import('../config/config.js').DmConfig;
  registryDirs?: readonly string[];
  /** The configuration file: a dm.lock beside it pins the references it has. */
  configPath?: string | undefined;
  warn?: (message: string) => void;
}

/** The registry template source for a command: the resolver chain, dm.lock first when present. */
export async function createRegistryTemplateSource(
  options: CreateTemplateSourceOptions,
): Promise<RegistryTemplateSource> {
  const { dirname, join, resolve } = await import('node:path');
  const { buildResolverChain } = await import('./build-chain.js');
  const { readLockFile, LOCKFILE_NAME } = await import('./lock-file.js');
  const { LockResolver } = await import('./lock-resolver.js');
  const lock = options.configPath
    ? await readLockFile(join(dirname(resolve(options.configPath)), LOCKFILE_NAME))
    : undefined;
  const setup = await buildResolverChain({
    config: options.config,
    registryDirs: options.registryDirs,
    first: lock ? [new LockResolver(lock)] : [],
    ...(options.warn ? { onWarning: options.warn } : {}),
  });
  return new RegistryTemplateSource({
    chain: setup.chain,
    cacheRoot: options.config.dirs.cache,
    defaultRegistry: setup.defaultRegistry,
    offline: options.config.offline,
    ...(options.warn ? { warn: options.warn } : {}),
  });
}
