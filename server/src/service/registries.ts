/**
 * Registries and their credentials (docs/server.md "HTTP API"): adding, re-pointing, mirroring
 * whole, removing, and a registry as the API and the pages show it.
 */
import { DmError } from '../../../client/src/error.js';
import { checkGitArguments } from '../../../client/src/source/index.js';
import type { RequestAccess } from '../api/access.js';
import type { RegistryInfo } from '../api/shapes.js';
import { commitShown } from '../source/directory.js';
import { parseSourceSpec } from '../source/source-spec.js';
import type { RegistryRow } from '../store/contract.js';
import { decryptSecret, encryptSecret } from '../store/secrets.js';
import { parseOrganisation } from '../store/visibility.js';
import { type ServiceContext, ServicePart } from './context.js';
import type { MirrorCoordination } from './mirror-coordination.js';
import { isLocalSource, withoutCredentials } from './sources.js';

/** A registry that a pull-through created and nothing registered: it has no interval. */
function pulledThroughOnly(row: RegistryRow): boolean {
  return row.sourceType === 'upstream' && row.intervalSeconds === null;
}

/** A registry's source columns from its parsed source and the branch and path given. */
function sourceColumns(
  spec: ReturnType<typeof parseSourceSpec>,
  input: AddRegistryInput,
): Pick<RegistryRow, 'sourceType' | 'source' | 'branch' | 'path'> {
  return {
    sourceType: spec.type,
    source: spec.location,
    branch: input.branch ?? spec.branch,
    path: (input.path ?? spec.path).replace(/^\/+|\/+$/g, ''),
  };
}

export interface AddRegistryInput {
  source: string;
  name?: string | undefined;
  branch?: string | undefined;
  path?: string | undefined;
  interval?: number | undefined;
  visibility?: 'public' | 'private' | undefined;
  /** The organisation it belongs to (store/visibility.ts); makes it private unless visibility says. */
  organisation?: string | undefined;
  credential?: string | undefined;
  webhookSecret?: string | undefined;
}

/** What a non-admin sees instead of a directory source's path on the server. */
export const LOCAL_DIRECTORY = 'local directory';

/** The longest sync interval, seconds (a year): beyond it a number means nothing (docs/server.md). */
export const MAX_INTERVAL_SECONDS = 365 * 24 * 3600;
/** The longest credential secret, characters. */
export const MAX_SECRET_LENGTH = 10_000;

export interface RegistryInfoOptions {
  /** Include the findings of the last sync. */
  findings?: boolean;
  /** Who asks: only an admin sees a directory source's path. */
  viewer: Pick<RequestAccess, 'admin'>;
}

/** The `registry` metrics label of every private registry. */
export const PRIVATE_LABEL = '(private)';

const NAME_RE = /^[a-z0-9][a-z0-9.-]*(?::\d+)?\/[A-Za-z0-9][A-Za-z0-9-]*\/[A-Za-z0-9._-]+$/i;

export class Registries extends ServicePart {
  constructor(
    ctx: ServiceContext,
    private readonly mirroring: MirrorCoordination,
  ) {
    super(ctx);
  }

  /** How source strings are read here: GitHub hosts and the configured upstreams. */
  private sourceOptions(): { githubHosts: readonly string[]; upstreams: readonly string[] } {
    return {
      githubHosts: this.deps.githubHosts ?? [],
      upstreams: this.mirroring.upstreamUrls(),
    };
  }

  all(): Promise<RegistryRow[]> {
    return this.data.registries.list();
  }

  /** A registry by numeric id or name, if `access` may see it; otherwise not found. */
  async find(idOrName: string | number, access: RequestAccess): Promise<RegistryRow> {
    const text = String(idOrName);
    const row = /^\d+$/.test(text)
      ? await this.data.registries.byId(Number(text))
      : await this.data.registries.byName(text);
    if (!row || !access.canRead(row)) {
      throw new DmError('REGISTRY_NOT_FOUND', `no registry ${text} on this server`, {
        category: 'not-found',
        details: { registry: text },
      });
    }
    return row;
  }

  async add(input: AddRegistryInput): Promise<RegistryRow> {
    return (await this.register(input)).row;
  }

  /**
   * Adds a registry (`POST /api/v1/registries`; `created`), or makes one that a pull-through created
   * a whole mirror when `input.source` is `<upstream>/<name>` (not `created`: the same registry,
   * with what it holds, now synced on its interval; docs/mirroring.md "Mirroring a whole registry").
   * Any other registry of that name is a conflict.
   */
  async register(input: AddRegistryInput): Promise<{ row: RegistryRow; created: boolean }> {
    if (typeof input.source !== 'string' || input.source === '') {
      throw new DmError('INVALID_REGISTRY', 'source is required', { category: 'invalid-input' });
    }
    // Every source field is checked before it can reach git (options, branch names, '..').
    checkGitArguments({ location: input.source, branch: input.branch ?? null, path: input.path ?? '' });
    const spec = parseSourceSpec(input.source, this.sourceOptions());
    checkGitArguments({ branch: spec.branch, path: spec.path });
    const name = input.name ?? spec.defaultName;
    if (!NAME_RE.test(name)) {
      throw new DmError('INVALID_REGISTRY', `registry name '${name}' must look like <host>/<owner>/<repo>`, {
        category: 'invalid-input',
      });
    }
    const organisation =
      input.organisation === undefined ? null : parseOrganisation(input.organisation, 'organisation');
    const visibility = input.visibility ?? (organisation === null ? 'public' : 'private');
    if (visibility !== 'public' && visibility !== 'private') {
      throw new DmError(
        'INVALID_REGISTRY',
        `visibility must be public or private, not '${String(visibility)}'`,
        {
          category: 'invalid-input',
        },
      );
    }
    if (
      input.interval !== undefined &&
      (!Number.isInteger(input.interval) || input.interval < 60 || input.interval > MAX_INTERVAL_SECONDS)
    ) {
      throw new DmError(
        'INVALID_REGISTRY',
        `interval must be a whole number of seconds from 60 to ${MAX_INTERVAL_SECONDS} (a year), not ${String(input.interval).slice(0, 30)}`,
        { category: 'invalid-input' },
      );
    }
    if (input.credential && (await this.data.credentials.secret(input.credential)) === undefined) {
      throw new DmError('CREDENTIAL_NOT_FOUND', `no credential named '${input.credential}'`, {
        category: 'invalid-input',
      });
    }
    const existing = await this.data.registries.byName(name);
    if (existing && pulledThroughOnly(existing)) {
      if (spec.type !== 'upstream') {
        throw new DmError(
          'REGISTRY_EXISTS',
          `registry ${name} exists, pulled through from ${existing.source}: register source '${existing.source}' to mirror it whole, or delete it first to index it from another source`,
          { category: 'conflict' },
        );
      }
      if (
        (input.visibility !== undefined && visibility !== existing.visibility) ||
        (input.organisation !== undefined && organisation !== existing.organisation)
      ) {
        throw new DmError(
          'REGISTRY_EXISTS',
          `registry ${name} exists, pulled through as ${existing.visibility}${existing.organisation === null ? '' : ` of ${existing.organisation}`}: register it without visibility and organisation to mirror it whole as it is`,
          { category: 'conflict' },
        );
      }
      return {
        row: await this.mirrorWhole(existing, sourceColumns(spec, input), input.interval),
        created: false,
      };
    }
    if (existing) {
      throw new DmError('REGISTRY_EXISTS', `a registry named ${name} already exists`, {
        category: 'conflict',
      });
    }
    const row = await this.data.registries.insert({
      name,
      ...sourceColumns(spec, input),
      intervalSeconds: input.interval ?? (spec.type === 'upstream' ? this.mirroring.mirrorInterval() : null),
      visibility,
      organisation,
      credential: input.credential ?? null,
      webhookSecret: input.webhookSecret ? encryptSecret(this.deps.secretKey, input.webhookSecret) : null,
      createdAt: this.clock(),
    });
    this.catalog.invalidate();
    this.log('info', 'registry added', { registry: name, source: spec.type });
    return { row, created: true };
  }

  /**
   * Adds a registry, or points the registry of the same name at the source given (`dm-registry
   * start --index`): the source is parsed and the name checked as `add` does, a changed source
   * forgets its conditional-request ETag, a registry only pulled through so far becomes mirrored
   * whole (an interval, the ETag forgotten), and the caches are dropped.
   */
  async addOrUpdate(input: AddRegistryInput): Promise<RegistryRow> {
    const spec = parseSourceSpec(input.source, this.sourceOptions());
    const name = input.name ?? spec.defaultName;
    const existing = await this.data.registries.byName(name);
    if (!existing) return this.add({ ...input, name });
    const source = sourceColumns(spec, input);
    if (spec.type === 'upstream' && pulledThroughOnly(existing)) {
      return this.mirrorWhole(existing, source, input.interval);
    }
    const changed = (Object.keys(source) as (keyof typeof source)[]).some((k) => source[k] !== existing[k]);
    if (!changed) return existing;
    const row = await this.data.registries.updateSource(existing.id, source);
    this.catalog.invalidate();
    this.log('info', 'registry source changed', { registry: name, source: spec.type });
    return row ?? existing;
  }

  /**
   * A registry so far only pulled through, mirrored whole from now on (`--index` or `POST
   * /registries` of `<upstream>/<name>`): it keeps what it holds, gets an eager mirror's interval,
   * and its version list's ETag (of a revalidation of what it held) is forgotten, so its next sync
   * pulls every version.
   */
  private async mirrorWhole(
    existing: RegistryRow,
    source: Pick<RegistryRow, 'sourceType' | 'source' | 'branch' | 'path'>,
    interval: number | undefined,
  ): Promise<RegistryRow> {
    const row = await this.data.registries.updateSource(existing.id, {
      ...source,
      intervalSeconds: interval ?? this.mirroring.mirrorInterval(),
    });
    this.catalog.invalidate();
    this.log('info', 'registry mirrored whole from now on', {
      registry: existing.name,
      source: source.sourceType,
    });
    return row ?? existing;
  }

  async remove(id: number): Promise<void> {
    const row = await this.data.registries.delete(id);
    if (!row) throw new DmError('REGISTRY_NOT_FOUND', `no registry ${id}`, { category: 'not-found' });
    this.catalog.invalidate();
    this.log('info', 'registry removed', { registry: row.name });
  }

  async storeCredential(name: string, secret: string, kind = 'token'): Promise<void> {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) {
      throw new DmError(
        'INVALID_CREDENTIAL',
        `credential name '${name}' must match [A-Za-z0-9][A-Za-z0-9._-]*`,
        {
          category: 'invalid-input',
        },
      );
    }
    if (typeof secret !== 'string' || secret === '') {
      throw new DmError('INVALID_CREDENTIAL', 'secret must be a non-empty string', {
        category: 'invalid-input',
      });
    }
    if (secret.length > MAX_SECRET_LENGTH) {
      throw new DmError(
        'INVALID_CREDENTIAL',
        `the secret is ${secret.length} characters, more than ${MAX_SECRET_LENGTH}: a credential is a token or a key, not a file`,
        { category: 'invalid-input' },
      );
    }
    const now = this.clock();
    await this.data.credentials.upsert(name, kind, encryptSecret(this.deps.secretKey, secret), now);
  }

  async credentialFor(row: RegistryRow): Promise<string | null> {
    if (!row.credential) return null;
    const secret = await this.data.credentials.secret(row.credential);
    if (secret === undefined)
      throw new DmError('CREDENTIAL_NOT_FOUND', `registry ${row.name} names a missing credential`, {
        category: 'error',
      });
    return decryptSecret(this.deps.secretKey, secret);
  }

  /**
   * The GitHub registries with a webhook secret, their secrets still sealed, and the key that opens
   * them: the webhook worker opens only those of a delivery's repository (docs/server.md, "Webhooks").
   */
  async webhookRecipients(): Promise<{ rows: RegistryRow[]; key: Uint8Array }> {
    const rows = (await this.all()).filter((r) => r.sourceType === 'github' && r.webhookSecret);
    return { rows, key: this.deps.secretKey };
  }

  /**
   * A registry as the API and the pages show it. Only an admin sees where a directory source is
   * on the server's disk: others see `local directory`, in the location and in a sync error.
   */
  async info(row: RegistryRow, options: RegistryInfoOptions): Promise<RegistryInfo> {
    // One rule for the API and the pages: a source on the server's own disk (a directory, a local
    // git repository, `file://`) is shown to admins only (isLocalSource, service/sources.ts).
    const hidePath = isLocalSource(row) && !options.viewer.admin;
    const shown = (text: string | null) =>
      text === null || !hidePath || row.source === '' ? text : text.split(row.source).join(LOCAL_DIRECTORY);
    const last = await this.data.syncs.latest(row.id);
    const info: RegistryInfo = {
      id: row.id,
      name: row.name,
      source: {
        type: row.sourceType,
        location: hidePath
          ? LOCAL_DIRECTORY
          : row.sourceType === 'directory'
            ? row.source
            : withoutCredentials(row.source),
        branch: row.branch,
        path: row.path,
      },
      visibility: row.visibility as 'public' | 'private',
      organisation: row.organisation,
      interval: row.intervalSeconds,
      commit: commitShown(row.commit),
      sync: {
        status: row.lastSyncStatus,
        lastSyncAt: row.lastSyncAt === null ? null : new Date(row.lastSyncAt).toISOString(),
        error: shown(row.lastSyncError),
        // A directory is read without any API: no request count to show.
        apiRequests: row.sourceType === 'directory' ? null : (last?.apiRequests ?? null),
        rateLimitRemaining: last?.rateLimitRemaining ?? null,
      },
      counts: { templates: row.templateCount, versions: row.versionCount, findings: row.findingCount },
    };
    if (row.sourceType === 'upstream') info.upstream = await this.mirroring.upstreamInfo(row);
    if (options.findings) info.findings = await this.data.registries.findings(row.id);
    return info;
  }
}
