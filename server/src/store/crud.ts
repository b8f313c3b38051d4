/**
 * The common CRUD, written once for both dialects (docs/server.md "The store"): registries,
 * credentials, tokens and syncs, as `$n` SQL over the dialect's SqlRunner (sql.ts). What truly
 * differs is the runner's (byte order, SQLite's synchronous statements and swap wait) or is passed
 * in (which syncs a live replica's lease still covers: postgres/sync-lease.ts). The sync's
 * outcome is a list of statements (`syncOutcomeSteps`) that the index swap of each dialect runs
 * inside its own transaction, so a sync ends the same way with or without a swap.
 */
import type { PreviousVersion } from '../indexer/build-index.js';
import type {
  CredentialQueries,
  FindingRow,
  RegistryGeneration,
  RegistryQueries,
  RegistryRow,
  RegistrySyncState,
  SwapRecord,
  SyncQueries,
  SyncValues,
  TokenQueries,
  TokenRow,
} from './contract.js';
import type { SqlRunner, Step } from './sql.js';

/** Content nothing references any more: removed with a registry, and by every index swap. */
export const PRUNE_FILES_SQL = `DELETE FROM files WHERE NOT EXISTS (SELECT 1 FROM version_files vf WHERE vf.sha256 = files.sha256)
  AND NOT EXISTS (SELECT 1 FROM registries r WHERE r.registry_yaml_sha256 = files.sha256)`;

/** A table's columns by their names in the row types (contract.ts). */
type Columns<T> = { readonly [K in keyof T]-?: string };

const REGISTRY: Columns<RegistryRow> = {
  id: 'id',
  name: 'name',
  sourceType: 'source_type',
  source: 'source',
  branch: 'branch',
  path: 'path',
  intervalSeconds: 'interval_seconds',
  visibility: 'visibility',
  organisation: 'organisation',
  credential: 'credential',
  webhookSecret: 'webhook_secret',
  commit: 'commit',
  etag: 'etag',
  registryYamlSha256: 'registry_yaml_sha256',
  generation: 'generation',
  lastSyncAt: 'last_sync_at',
  lastSyncStatus: 'last_sync_status',
  lastSyncError: 'last_sync_error',
  templateCount: 'template_count',
  versionCount: 'version_count',
  findingCount: 'finding_count',
  createdAt: 'created_at',
};

const SYNC: Columns<SyncValues> = {
  id: 'id',
  registryId: 'registry_id',
  trigger: 'trigger',
  status: 'status',
  startedAt: 'started_at',
  finishedAt: 'finished_at',
  commit: 'commit',
  apiRequests: 'api_requests',
  rateLimitRemaining: 'rate_limit_remaining',
  error: 'error',
  replica: 'replica',
};

const TOKEN: Columns<TokenRow> = {
  id: 'id',
  hash: 'hash',
  role: 'role',
  registryId: 'registry_id',
  organisations: 'organisations',
  createdAt: 'created_at',
  expiresAt: 'expires_at',
  lastUsedAt: 'last_used_at',
};

/** `"a" AS "camelA", …`: every column, named as in the row type. */
const selectList = <T>(columns: Columns<T>) =>
  Object.entries<string>(columns)
    .map(([key, column]) => `"${column}" AS "${key}"`)
    .join(', ');

/** The defined entries of `values` as quoted columns and their values (undefined: left alone). */
function entriesOf<T>(columns: Columns<T>, values: Partial<T>): [string, unknown][] {
  const found: [string, unknown][] = [];
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue;
    const column = (columns as Record<string, string>)[key];
    if (column === undefined) throw new Error(`no column for '${key}'`);
    found.push([`"${column}"`, value]);
  }
  return found;
}

/** `UPDATE table SET … WHERE id = $n` with the defined entries of `values`. */
function updateById<T>(
  table: string,
  columns: Columns<T>,
  values: Partial<T>,
  id: number,
  returning = '',
): Step {
  const set = entriesOf(columns, values);
  const assignments = set.map(([column], i) => `${column} = $${i + 1}`).join(', ');
  return [
    `UPDATE ${table} SET ${assignments} WHERE id = $${set.length + 1}${returning}`,
    [...set.map(([, v]) => v), id],
  ];
}

// PostgreSQL's bigint columns (times) arrive as text: one conversion for both dialects.
const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const REGISTRY_SELECT = `SELECT ${selectList(REGISTRY)} FROM registries`;
const registryRow = (r: RegistryRow): RegistryRow => ({
  ...r,
  lastSyncAt: numOrNull(r.lastSyncAt),
  createdAt: num(r.createdAt),
});
const tokenRow = (t: TokenRow): TokenRow => ({
  ...t,
  createdAt: num(t.createdAt),
  expiresAt: numOrNull(t.expiresAt),
  lastUsedAt: numOrNull(t.lastUsedAt),
});

/** A sync's history row ended, the registry's history trimmed to its last `keep` syncs. */
function finishSteps(syncId: number, registryId: number, values: SyncValues, keep: number): Step[] {
  const steps: Step[] = [];
  if (entriesOf(SYNC, values).length > 0) steps.push(updateById('syncs', SYNC, values, syncId));
  steps.push([
    `DELETE FROM syncs WHERE registry_id = $1 AND id NOT IN
       (SELECT id FROM syncs WHERE registry_id = $2 ORDER BY id DESC LIMIT $3)`,
    [registryId, registryId, keep],
  ]);
  return steps;
}

const stateStep = (registryId: number, state: RegistrySyncState): Step =>
  updateById('registries', REGISTRY, state, registryId);

/** A sync's outcome (SwapMeta.record): the statements each dialect's swap runs last in its transaction. */
export function syncOutcomeSteps(record: SwapRecord): Step[] {
  return [
    ...finishSteps(record.syncId, record.registryId, record.sync, record.keep),
    stateStep(record.registryId, record.state),
  ];
}

const INTERRUPTED = `status = 'interrupted', finished_at = $1, error = 'the server stopped during the sync'`;

export interface CrudOptions {
  /**
   * A condition true when no live replica holds the lease of the registry `registryId` (an SQL
   * expression) names: recovering interrupted syncs spares those another replica may be running
   * (PostgreSQL; postgres/sync-lease.ts). Without it, every `running` sync is recovered (SQLite:
   * one process owns the file).
   */
  unleased?: (registryId: string) => string;
}

export interface CrudQueries {
  registries: RegistryQueries;
  credentials: CredentialQueries;
  tokens: TokenQueries;
  syncs: SyncQueries;
}

export function crudQueries(sql: SqlRunner, options: CrudOptions = {}): CrudQueries {
  const first = async <T>(text: string, params: readonly unknown[] = []) =>
    (await sql.all<T>(text, params))[0];
  const one = async (step: Step) => (await sql.write([step]))[0]!;
  const unleased = (registryId: string) => (options.unleased ? ` AND ${options.unleased(registryId)}` : '');

  const registries: RegistryQueries = {
    async list() {
      return (await sql.all<RegistryRow>(`${REGISTRY_SELECT} ORDER BY ${sql.byteOrder('name')}`)).map(
        registryRow,
      );
    },
    async byId(id) {
      const row = await first<RegistryRow>(`${REGISTRY_SELECT} WHERE id = $1`, [id]);
      return row && registryRow(row);
    },
    async byName(name) {
      const row = await first<RegistryRow>(`${REGISTRY_SELECT} WHERE name = $1`, [name]);
      return row && registryRow(row);
    },
    async insert(values) {
      const set = entriesOf(REGISTRY, values);
      const { rows } = await one([
        `INSERT INTO registries (${set.map(([c]) => c).join(', ')}) VALUES (${set.map((_, i) => `$${i + 1}`).join(', ')})
         RETURNING ${selectList(REGISTRY)}`,
        set.map(([, v]) => v),
      ]);
      return registryRow(rows[0] as RegistryRow);
    },
    async updateSource(id, source) {
      const { rows } = await one(
        updateById(
          'registries',
          REGISTRY,
          { ...source, etag: null },
          id,
          ` RETURNING ${selectList(REGISTRY)}`,
        ),
      );
      return rows[0] === undefined ? undefined : registryRow(rows[0] as RegistryRow);
    },
    async delete(id) {
      const [deleted] = await sql.write([
        [`DELETE FROM registries WHERE id = $1 RETURNING ${selectList(REGISTRY)}`, [id]],
        [PRUNE_FILES_SQL, []],
      ]);
      return deleted!.rows[0] === undefined ? undefined : registryRow(deleted!.rows[0] as RegistryRow);
    },
    async generations() {
      return (await sql.all<RegistryGeneration>('SELECT id, generation FROM registries')).map((r) => ({
        id: num(r.id),
        generation: num(r.generation),
      }));
    },
    async removedUpstreamCount(id) {
      const row = await first<{ n: number | string }>(
        'SELECT count(*) AS n FROM versions WHERE registry_id = $1 AND removed_upstream_at IS NOT NULL',
        [id],
      );
      return num(row?.n ?? 0);
    },
    async findings(id) {
      return sql.all<FindingRow>(
        `SELECT code, severity, path, message FROM findings WHERE registry_id = $1
         ORDER BY ${sql.byteOrder('path')}, ${sql.byteOrder('code')}`,
        [id],
      );
    },
  };

  const credentials: CredentialQueries = {
    async secret(name) {
      return (await first<{ secret: string }>('SELECT secret FROM credentials WHERE name = $1', [name]))
        ?.secret;
    },
    async upsert(name, kind, secret, now) {
      await one([
        `INSERT INTO credentials (name, kind, secret, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (name) DO UPDATE SET secret = excluded.secret, kind = excluded.kind, updated_at = excluded.updated_at`,
        [name, kind, secret, now, now],
      ]);
    },
  };

  const tokens: TokenQueries = {
    async all() {
      return (await sql.all<TokenRow>(`SELECT ${selectList(TOKEN)} FROM tokens ORDER BY id`)).map(tokenRow);
    },
    // Cheap: count, largest id and sum of ids change with every creation and every revocation, so
    // replicas polling it see both without reading the rows.
    async fingerprint() {
      const row = await first<{ n: unknown; m: unknown; s: unknown }>(
        'SELECT count(*) AS n, coalesce(max(id), 0) AS m, coalesce(sum(id), 0) AS s FROM tokens',
      );
      return `${num(row!.n)}:${num(row!.m)}:${num(row!.s)}`;
    },
    async insert(values) {
      const { rows } = await one([
        `INSERT INTO tokens (hash, role, registry_id, organisations, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
        [
          values.hash,
          values.role,
          values.registryId,
          values.organisations,
          values.createdAt,
          values.expiresAt,
        ],
      ]);
      return num((rows[0] as { id: unknown }).id);
    },
    async delete(by) {
      const { changes } = await one(
        'id' in by
          ? ['DELETE FROM tokens WHERE id = $1', [by.id]]
          : ['DELETE FROM tokens WHERE hash = $1', [by.hash]],
      );
      return changes > 0;
    },
    async recordUsed(used) {
      if (used.size === 0) return;
      await sql.write(
        [...used].map(
          ([id, at]): Step => [
            'UPDATE tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)',
            [at, id, at],
          ],
        ),
      );
    },
  };

  const syncs: SyncQueries = {
    async recoverInterrupted(now) {
      const [recovered] = await sql.write([
        [`UPDATE syncs SET ${INTERRUPTED} WHERE status = 'running'${unleased('syncs.registry_id')}`, [now]],
        [
          `UPDATE registries SET last_sync_status = 'interrupted'
           WHERE last_sync_status = 'running'${unleased('registries.id')}`,
          [],
        ],
      ]);
      return recovered!.changes;
    },
    async interruptRunning(registryId, now) {
      const { changes } = await one([
        `UPDATE syncs SET ${INTERRUPTED} WHERE registry_id = $2 AND status = 'running'`,
        [now, registryId],
      ]);
      return changes;
    },
    async start(registryId, trigger, startedAt, replica) {
      const [inserted] = await sql.write([
        [
          `INSERT INTO syncs (registry_id, "trigger", status, started_at, replica) VALUES ($1, $2, 'running', $3, $4)
           RETURNING id`,
          [registryId, trigger, startedAt, replica],
        ],
        stateStep(registryId, { lastSyncStatus: 'running' }),
      ]);
      return num((inserted!.rows[0] as { id: unknown }).id);
    },
    async finish(syncId, registryId, values, keep) {
      await sql.write(finishSteps(syncId, registryId, values, keep));
    },
    async setRegistryState(registryId, state) {
      await one(stateStep(registryId, state));
    },
    async latest(registryId) {
      const row = await first<{ apiRequests: number; rateLimitRemaining: number | null }>(
        `SELECT api_requests AS "apiRequests", rate_limit_remaining AS "rateLimitRemaining" FROM syncs
         WHERE registry_id = $1 ORDER BY id DESC LIMIT 1`,
        [registryId],
      );
      return row;
    },
    async countFiles() {
      return num((await first<{ n: unknown }>('SELECT count(*) AS n FROM files'))?.n ?? 0);
    },
    async versionTrees(registryId) {
      const found = await sql.all<PreviousVersion & { dir: string }>(
        `SELECT dir, tree_sha AS "treeSha", digest, schema_json AS "schemaJson" FROM versions
         WHERE registry_id = $1 AND tree_sha IS NOT NULL`,
        [registryId],
      );
      return new Map(found.map(({ dir, ...v }) => [dir, v]));
    },
  };

  return { registries, credentials, tokens, syncs };
}
