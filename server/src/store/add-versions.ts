/**
 * Adding versions to registries without re-indexing them (docs/mirroring.md): what a mirror pulls
 * through and what a bundle import brings, written once for both dialects. The rules (which
 * versions are new, unchanged or in conflict, whether one becomes its template's latest, the
 * search fields of its schema, the errors) and the flow that loads their inputs and writes what
 * they decide (addVersionsFlow, sql.ts's Flow), in one transaction: the registry row (created when
 * the server has not seen the registry), template rows, versions, content (stored once by sha256)
 * and counts; readers see all of it or none of it. A version that exists with another digest is
 * never overwritten: the whole call is refused with the conflicts named. Each step is a statement
 * over a list parameter, a batch at a time (a bundle brings thousands of versions: on PostgreSQL,
 * round trips per batch, not per version). What each dialect keeps itself: its search rows
 * (`SearchRowSteps`) and, on PostgreSQL, announcing the new generations.
 */
import { DmError } from '../../../client/src/error.js';
import { compareVersions, tryParseVersion } from '../../../client/src/reference/index.js';
import { gitBlobSha } from '../../../client/src/source/index.js';
import { schemaInfo } from '../indexer/build-index.js';
import type { AddedFile, AddedGroup, AddedVersion, AddVersionsResult } from './contract.js';
import { addedFirstSeenFlow } from './first-seen.js';
import {
  batchesOf,
  type Flow,
  insertRowsFlow,
  type KeyedRead,
  listParam,
  lookupFlow,
  rowsOf,
  type SqlDialect,
  type Step,
} from './sql.js';

export interface VersionConflict {
  reference: string;
  stored: string;
  incoming: string;
}

/** Whether an added version becomes its template's latest (newer, or the latest replaced). */
export function takesLatest(v: AddedVersion, latest: string | null): boolean {
  return newer(v.version, latest) || (v.supersedes !== undefined && v.version === latest);
}

export function newer(a: string, b: string | null): boolean {
  if (b === null) return true;
  const va = tryParseVersion(a);
  const vb = tryParseVersion(b);
  if (!va || !vb) return a > b;
  return compareVersions(va, vb) > 0;
}

export function schemaInfoOf(schemaJson: string | null): ReturnType<typeof schemaInfo> {
  if (!schemaJson) return schemaInfo(null);
  try {
    return schemaInfo(JSON.parse(schemaJson));
  } catch {
    return schemaInfo(null);
  }
}

/**
 * Splits versions to add into new ones and ones stored with the same digest; throws
 * `VERSION_CONFLICT` when any is stored with another digest (`stored` answers the stored digest).
 */
export function sortAdded(
  registry: string,
  versions: readonly AddedVersion[],
  stored: (v: AddedVersion) => string | undefined,
): { todo: AddedVersion[]; unchanged: number } {
  const conflicts: VersionConflict[] = [];
  const todo: AddedVersion[] = [];
  let unchanged = 0;
  for (const v of versions) {
    const digest = stored(v);
    if (digest === undefined) todo.push(v);
    else if (digest === v.digest) unchanged++;
    else if (v.supersedes === digest)
      todo.push(v); // accepted upstream: replaces the stored one
    else conflicts.push({ reference: exactName(registry, v), stored: digest, incoming: v.digest });
  }
  if (conflicts.length > 0) throw conflictError(conflicts);
  return { todo, unchanged };
}

/** Nothing is written when a stored version would change (docs/mirroring.md). */
export function conflictError(conflicts: readonly VersionConflict[]): DmError {
  const first = conflicts[0]!;
  return new DmError(
    'VERSION_CONFLICT',
    `${first.reference} is stored with digest ${first.stored} and would become ${first.incoming}; published versions never change, so nothing was written${conflicts.length > 1 ? ` (${conflicts.length} versions conflict)` : ''}`,
    { category: 'conflict', details: { conflicts } },
  );
}

/** `registry/collection/template:=version`, as conflicts name a version. */
export function exactName(registry: string, v: { collection: string; template: string; version: string }) {
  return `${[registry, v.collection, v.template].filter(Boolean).join('/')}:=${v.version}`;
}

/** The content a version needs that is neither stored nor supplied. */
export function contentMissing(v: AddedVersion, f: AddedFile): DmError {
  return new DmError(
    'CONTENT_MISSING',
    `the content of ${v.template}:${v.version} file ${f.path} (${f.sha256}) is not available`,
    { category: 'invalid-input' },
  );
}

/** The key of a version within its registry, as `flagRemovedUpstream` takes it. */
export function versionKey(v: { collection: string; template: string; version: string }): string {
  return `${v.collection}\0${v.template}\0${v.version}`;
}

/** A template's search fields as adding versions leaves them (new, or its latest version changed). */
export interface TemplateSearchRow {
  id: number;
  registryId: number;
  collection: string;
  name: string;
  title: string | null;
  description: string | null;
  properties: string;
  /** Created by this call: it has no search row yet. */
  fresh: boolean;
}

/**
 * How a dialect's full-text search keeps its rows in step with templates written by adding
 * versions (sqlite/index-writes.ts: the FTS table; postgres/add-versions.ts: a column).
 */
export type SearchRowSteps = (d: SqlDialect, rows: readonly TemplateSearchRow[]) => Step[];

/** The new generation of a registry that adding versions changed. */
export interface AddedGeneration {
  registryId: number;
  generation: number;
}

const templateKey = (v: { collection: string; template: string }) => `${v.collection}\0${v.template}`;

/**
 * Adds each group's versions to its registry (created if absent), inside the caller's
 * transaction. `content` supplies bytes for content the store does not hold yet. Throws
 * `VERSION_CONFLICT` (nothing written: the caller rolls back) when any version exists with
 * another digest.
 */
export function* addVersionsFlow(
  d: SqlDialect,
  search: SearchRowSteps,
  groups: readonly AddedGroup[],
  content: (sha256: string) => Buffer | undefined,
  now: number,
): Flow<AddVersionsResult & { generations: AddedGeneration[] }> {
  const total: AddVersionsResult & { generations: AddedGeneration[] } = {
    registryId: 0,
    added: 0,
    unchanged: 0,
    quarantined: [],
    generations: [],
  };
  for (const { registry, versions } of groups) {
    // One writer per registry across replicas, until COMMIT.
    if (d.keyLock) yield [d.keyLock, [`dm-add-versions:${registry.name}`]];
    yield [
      `INSERT INTO registries (name, source_type, source, path, visibility, "commit", last_sync_status, created_at)
       VALUES ($1, $2, $3, '', $4, $5, 'succeeded', $6) ON CONFLICT (name) DO NOTHING`,
      [registry.name, registry.sourceType, registry.source, registry.visibility, registry.commit, now],
    ];
    const [reg] = yield* rowsOf<{ id: number }>('SELECT id FROM registries WHERE name = $1', [registry.name]);
    const registryId = reg!.id;
    const stored = yield* storedDigests(d, registryId, versions);
    const { todo, unchanged } = sortAdded(registry.name, versions, (v) => stored.get(v));
    // The mirror's own first-seen record (docs/integrity-store.md §6): a version whose digest
    // differs from the one first seen here is quarantined, not added.
    const plan = yield* addedFirstSeenFlow(
      d,
      { registryId, registry: registry.name, syncId: null, now },
      todo,
    );
    const kept = plan.kept;
    yield* insertContent(d, kept, content);
    const templateIds = yield* writeTemplates(d, search, registryId, kept);
    // Accepted upstream: the superseded rows go (their files cascade), the new ones come in.
    for (const v of kept) {
      if (v.supersedes === undefined) continue;
      yield [
        'DELETE FROM versions WHERE template_id = $1 AND version = $2',
        [templateIds.get(templateKey(v)), v.version],
      ];
    }
    yield* insertVersions(d, registryId, kept, templateIds);
    if (kept.length > 0) {
      const [bumped] = yield* rowsOf<{ generation: number }>(
        `UPDATE registries SET generation = generation + 1, last_sync_at = $1,
           "commit" = coalesce($2, "commit"),
           template_count = (SELECT count(*) FROM templates WHERE registry_id = $3),
           version_count = (SELECT count(*) FROM versions WHERE registry_id = $4)
         WHERE id = $5 RETURNING generation`,
        [now, registry.commit, registryId, registryId, registryId],
      );
      total.generations.push({ registryId, generation: Number(bumped!.generation) });
    }
    total.registryId = registryId;
    total.added += kept.length;
    total.unchanged += unchanged;
    total.quarantined.push(...plan.quarantined);
  }
  return total;
}

/** The stored digest of a version (`$2`: the registry's id), by key. */
const STORED_DIGEST: KeyedRead = {
  keys: [
    ['collection', 'text'],
    ['template', 'text'],
    ['version', 'text'],
  ],
  sql: (keys) => `SELECT k.at, v.digest
    FROM ${keys} CROSS JOIN templates t CROSS JOIN versions v
    WHERE t.registry_id = $2 AND t.collection = k.collection AND t.name = k.template
      AND v.template_id = t.id AND v.version = k.version`,
};

/** The stored digest of each of `versions` that exists in the registry. */
function* storedDigests(
  d: SqlDialect,
  registryId: number,
  versions: readonly AddedVersion[],
): Flow<Map<AddedVersion, string>> {
  const found = yield* lookupFlow<{ at: number; digest: string }>(
    d,
    STORED_DIGEST,
    versions.map((v) => [v.collection, v.template, v.version]),
    [registryId],
  );
  return new Map(found.map((r) => [versions[r.at]!, r.digest]));
}

/** Whether the store holds content, by its sha256. */
const STORED_CONTENT: KeyedRead = {
  keys: [['sha256', 'text']],
  sql: (keys) => `SELECT k.at FROM ${keys} CROSS JOIN files f WHERE f.sha256 = k.sha256`,
};

/** Which of `shas` the store holds. */
export function* storedContent(d: SqlDialect, shas: readonly string[]): Flow<Set<string>> {
  const found = yield* lookupFlow<{ at: number }>(
    d,
    STORED_CONTENT,
    shas.map((sha) => [sha]),
  );
  return new Set(found.map((r) => shas[r.at]!));
}

/** Stores the content of `versions` the database lacks, once each. */
function* insertContent(
  d: SqlDialect,
  versions: readonly AddedVersion[],
  content: (sha256: string) => Buffer | undefined,
): Flow<void> {
  const wanted = new Map<string, { v: AddedVersion; f: AddedFile }>();
  for (const v of versions)
    for (const f of v.files) if (!wanted.has(f.sha256)) wanted.set(f.sha256, { v, f });
  const stored = yield* storedContent(d, [...wanted.keys()]);
  const rows: { sha256: string; gitSha: string; size: number; content: Buffer }[] = [];
  for (const [sha, { v, f }] of wanted) {
    if (stored.has(sha)) continue;
    const data = content(sha);
    if (!data) throw contentMissing(v, f);
    rows.push({ sha256: sha, gitSha: gitBlobSha(data), size: f.size, content: data });
  }
  // Bytes as binary parameters, never inside a list (sql.ts `insertRows`, a `blob` column).
  yield* insertRowsFlow(
    d,
    'files',
    [
      ['sha256', 'text'],
      ['git_sha', 'text'],
      ['size', 'int'],
      ['content', 'blob'],
    ],
    rows.map((r) => [r.sha256, r.gitSha, r.size, r.content]),
    'ON CONFLICT DO NOTHING',
  );
}

/** A template's row (`$2`: the registry's id), by key. */
const STORED_TEMPLATE: KeyedRead = {
  keys: [
    ['collection', 'text'],
    ['name', 'text'],
  ],
  sql: (keys) => `SELECT k.at, t.id, t.latest_version AS "latestVersion"
    FROM ${keys} CROSS JOIN templates t WHERE t.registry_id = $2 AND t.collection = k.collection AND t.name = k.name`,
};

/**
 * The template row of each of `versions` (by templateKey), inserted when new; a template's latest
 * version, title, description and search row end as the last of its versions that took latest
 * left them, as when the versions are added one by one.
 */
function* writeTemplates(
  d: SqlDialect,
  search: SearchRowSteps,
  registryId: number,
  versions: readonly AddedVersion[],
): Flow<Map<string, number>> {
  const keys = [...new Map(versions.map((v) => [templateKey(v), v])).values()];
  const rows = new Map<
    string,
    { id: number | undefined; latestVersion: string | null; takes?: AddedVersion }
  >();
  const found = yield* lookupFlow<{ at: number; id: number; latestVersion: string | null }>(
    d,
    STORED_TEMPLATE,
    keys.map((v) => [v.collection, v.template]),
    [registryId],
  );
  for (const r of found) rows.set(templateKey(keys[r.at]!), { id: r.id, latestVersion: r.latestVersion });
  const created: AddedVersion[] = [];
  for (const v of versions) {
    const row = rows.get(templateKey(v));
    if (!row) {
      rows.set(templateKey(v), { id: undefined, latestVersion: v.version, takes: v });
      created.push(v);
    } else if (takesLatest(v, row.latestVersion)) {
      row.latestVersion = v.version;
      row.takes = v;
    }
  }
  const ids = new Map<string, number>();
  for (const [key, row] of rows) if (row.id !== undefined) ids.set(key, row.id);
  const searchRows: TemplateSearchRow[] = [];
  const searchRow = (id: number, v: AddedVersion, fresh: boolean) => {
    const info = schemaInfoOf(v.schemaJson);
    searchRows.push({
      id,
      registryId,
      collection: v.collection,
      name: v.template,
      title: info.title,
      description: info.description,
      properties: info.properties.join(' '),
      fresh,
    });
    return info;
  };
  for (const batch of batchesOf(created)) {
    const latest = batch.map((v) => rows.get(templateKey(v))!.takes!);
    const infos = latest.map((v) => schemaInfoOf(v.schemaJson));
    const inserted = yield* insertRowsFlow<{ id: number; collection: string; name: string }>(
      d,
      'templates',
      [
        ['registry_id', 'int'],
        ['collection', 'text'],
        ['name', 'text'],
        ['latest_version', 'text'],
        ['title', 'text'],
        ['description', 'text'],
      ],
      latest.map((v, i) => [
        registryId,
        v.collection,
        v.template,
        v.version,
        infos[i]!.title,
        infos[i]!.description,
      ]),
      'RETURNING id, collection, name',
    );
    for (const r of inserted) {
      const key = templateKey({ collection: r.collection, template: r.name });
      ids.set(key, r.id);
      searchRow(r.id, rows.get(key)!.takes!, true);
    }
  }
  const updated = [...rows.values()].filter((r) => r.id !== undefined && r.takes !== undefined);
  const update = `UPDATE templates SET latest_version = u.version, title = u.title, description = u.description
    FROM ${d.list('$1', 'u', [
      ['id', 'int'],
      ['version', 'text'],
      ['title', 'text'],
      ['description', 'text'],
    ])} WHERE templates.id = u.id`;
  for (const batch of batchesOf(updated)) {
    const infos = batch.map((r) => searchRow(r.id!, r.takes!, false));
    yield [
      update,
      [listParam(batch.map((r, i) => [r.id, r.takes!.version, infos[i]!.title, infos[i]!.description]))],
    ];
  }
  for (const batch of batchesOf(searchRows)) for (const step of search(d, batch)) yield step;
  return ids;
}

/** The version rows of `versions` and their file lists. */
function* insertVersions(
  d: SqlDialect,
  registryId: number,
  versions: readonly AddedVersion[],
  templateIds: ReadonlyMap<string, number>,
): Flow<void> {
  for (const batch of batchesOf(versions)) {
    const inserted = yield* insertRowsFlow<{ id: number; templateId: number; version: string }>(
      d,
      'versions',
      [
        ['template_id', 'int'],
        ['registry_id', 'int'],
        ['version', 'text'],
        ['kind', 'text'],
        ['dir', 'text'],
        ['template_file', 'text'],
        ['schema_file', 'text'],
        ['has_example', 'bool'],
        ['digest', 'text'],
        ['schema_json', 'text'],
      ],
      batch.map((v) => [
        templateIds.get(templateKey(v)),
        registryId,
        v.version,
        v.kind,
        v.dir,
        v.templateFile,
        v.schemaFile,
        v.hasExample,
        v.digest,
        v.schemaJson,
      ]),
      'RETURNING id, template_id AS "templateId", version',
    );
    const versionIds = new Map(inserted.map((r) => [`${r.templateId}\0${r.version}`, r.id]));
    yield* insertRowsFlow(
      d,
      'version_files',
      [
        ['version_id', 'int'],
        ['path', 'text'],
        ['sha256', 'text'],
        ['size', 'int'],
      ],
      batch.flatMap((v) => {
        const id = versionIds.get(`${templateIds.get(templateKey(v))}\0${v.version}`);
        return v.files.map((f) => [id, f.path, f.sha256, f.size]);
      }),
    );
  }
}
