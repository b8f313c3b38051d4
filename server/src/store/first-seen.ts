/**
 * The first-seen record's decision inside an index swap (docs/integrity-store.md §2), the same for
 * both dialects: each version of a newly built index is compared with the newest first-seen digest
 * of its key. A version never seen is recorded (and appended to the checksum log); one whose
 * digest changed is quarantined: the served (first-seen) rows replace it in the new index, so no
 * read path can serve the new bytes. The dialects only load the rows (swap-index.ts,
 * swap-index-pg.ts) and write what this module decides.
 */
import type Database from 'better-sqlite3';
import { encodeRecord, type LogRecord } from '../../../client/src/integrity/index.js';
import { formatTemplateName } from '../../../client/src/reference/index.js';
import {
  type BuiltIndex,
  type IndexedFile,
  type IndexedVersion,
  latestOf,
  schemaInfo,
} from '../indexer/build-index.js';
import { appendRecordsPg, appendRecordsSqlite, type PgQueryable } from './checksum-log.js';
import type { QuarantineEvent } from './contract.js';

/** One changed file of a quarantined version: sha256 before and after (null: added or removed). */
export interface ChangedFile {
  path: string;
  old: string | null;
  new: string | null;
}

/** The served version of a key, as the store holds it (for the decision: id, digest, tree SHA). */
export interface ServedDigest {
  id: number;
  digest: string;
  treeSha: string | null;
}

/** A served version's full rows, loaded only for versions being quarantined. */
export interface ServedVersion {
  kind: IndexedVersion['kind'];
  dir: string;
  templateFile: string;
  schemaFile: string | null;
  hasExample: boolean;
  digest: string;
  treeSha: string | null;
  schemaJson: string | null;
  files: IndexedFile[];
}

/** An open quarantine as stored. */
export interface OpenQuarantine {
  id: number;
  newDigest: string;
}

export interface FirstSeenPlan {
  /** Versions never seen: first_seen rows and log records, in this order. */
  records: LogRecord[];
  /** Quarantines to insert or refresh (each is notified after the commit). */
  quarantined: QuarantineEvent[];
  /** Open quarantines whose version is back at its first-seen digest: closed by the sync. */
  reverted: number[];
  /** Every `template@version` whose digest differs from its first-seen one (open or new). */
  quarantinedKeys: Set<string>;
}

/** What a swap loads before deciding. */
export interface FirstSeenState {
  /** The served version of each `collection\0template\0version`. */
  served: ReadonlyMap<string, ServedDigest>;
  /** The newest first-seen digest of each `template@version` under the registry's name. */
  firstSeen: ReadonlyMap<string, string>;
  /** Open quarantines by `template@version`. */
  open: ReadonlyMap<string, OpenQuarantine>;
}

export const servedKey = (collection: string, template: string, version: string) =>
  `${collection}\0${template}\0${version}`;

/** The canonical full template name of a template of a registry named `host/owner/repo`. */
export function canonicalTemplate(registry: string, collection: string, template: string): string {
  const [host = '', owner = '', repo = ''] = registry.split('/');
  return formatTemplateName({ host, owner, repo, collection, template });
}

/**
 * The range of canonical template names under a registry: `[lo, hi)` for an indexed prefix scan.
 * A byte-order range: on PostgreSQL the columns it scans are `COLLATE "C"` (migration 0011,
 * docs/server.md "Text is compared as bytes"), whatever the database's locale.
 */
export function templateRange(registry: string): [string, string] {
  return [`${registry}/`, `${registry}0`]; // '0' follows '/'
}

/**
 * Decides, for every version of `built`, whether it is recorded, unchanged or quarantined. Pure:
 * the caller loads `state` and, for each quarantined version, its served rows (`servedVersion`).
 */
export function planFirstSeen(
  built: BuiltIndex,
  state: FirstSeenState,
  meta: { registryId: number; registry: string; now: number },
): FirstSeenPlan {
  const plan: FirstSeenPlan = { records: [], quarantined: [], reverted: [], quarantinedKeys: new Set() };
  for (const t of built.templates) {
    const template = canonicalTemplate(meta.registry, t.collection, t.name);
    for (const v of t.versions) {
      const key = `${template}@${v.version}`;
      const first = state.firstSeen.get(key);
      const open = state.open.get(key);
      if (first === undefined) {
        const record = { template, version: v.version, digest: v.digest };
        // A version no reference can name (the scanner is laxer than references) is not logged.
        if (recordable(record)) plan.records.push(record);
      } else if (first === v.digest) {
        if (open) plan.reverted.push(open.id);
      } else {
        plan.quarantinedKeys.add(key);
        if (open?.newDigest === v.digest) continue;
        plan.quarantined.push({
          registryId: meta.registryId,
          registry: meta.registry,
          template,
          version: v.version,
          firstDigest: first,
          newDigest: v.digest,
          changedFiles: [],
          treeSha: v.treeSha ?? null,
          since: meta.now,
          openId: open?.id,
        });
      }
    }
  }
  return plan;
}

function recordable(record: LogRecord): boolean {
  try {
    encodeRecord(record);
    return true;
  } catch {
    return false;
  }
}

/** Which files differ between two file lists, by path. */
export function changedFiles(
  before: readonly Pick<IndexedFile, 'path' | 'sha256'>[],
  after: readonly Pick<IndexedFile, 'path' | 'sha256'>[],
): ChangedFile[] {
  const old = new Map(before.map((f) => [f.path, f.sha256]));
  const now = new Map(after.map((f) => [f.path, f.sha256]));
  const out: ChangedFile[] = [];
  for (const path of new Set([...old.keys(), ...now.keys()])) {
    const a = old.get(path) ?? null;
    const b = now.get(path) ?? null;
    if (a !== b) out.push({ path, old: a, new: b });
  }
  return out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

/**
 * Puts the served rows of every quarantined version (open or new) into `built` in place of the
 * new ones, or drops the version when no first-seen rows are served any more (its first-seen
 * bytes are gone; serving nothing is the only way not to serve the new ones). Fills each event's
 * `changedFiles`. The templates' latest version, title, description and search properties are
 * recomputed from what is left, so search snippets never show the new content either.
 */
export function keepFirstSeen(
  built: BuiltIndex,
  meta: { registry: string },
  quarantinedKeys: ReadonlySet<string>,
  served: (collection: string, template: string, version: string) => ServedVersion | undefined,
  events: readonly QuarantineEvent[],
): void {
  const byKey = new Map(events.map((e) => [`${e.template}@${e.version}`, e]));
  for (const t of built.templates) {
    const template = canonicalTemplate(meta.registry, t.collection, t.name);
    let touched = false;
    const kept: IndexedVersion[] = [];
    for (const v of t.versions) {
      const key = `${template}@${v.version}`;
      if (!quarantinedKeys.has(key)) {
        kept.push(v);
        continue;
      }
      touched = true;
      const old = served(t.collection, t.name, v.version);
      const event = byKey.get(key);
      if (event) event.changedFiles = changedFiles(old?.files ?? [], v.files);
      if (!old) continue;
      kept.push({
        version: v.version,
        kind: old.kind,
        dir: old.dir,
        templateFile: old.templateFile,
        schemaFile: old.schemaFile,
        hasExample: old.hasExample,
        digest: old.digest,
        treeSha: old.treeSha,
        schema: old.schemaJson === null ? null : JSON.parse(old.schemaJson),
        files: old.files,
      });
    }
    if (!touched) continue;
    t.versions = kept;
    const latest = latestOf(kept);
    t.latestVersion = latest?.version ?? null;
    Object.assign(t, schemaInfo(latest?.schema));
  }
  built.templates = built.templates.filter((t) => t.versions.length > 0);
}

/** The rows a swap writes for a plan: who wrote them and when. */
export interface FirstSeenMeta {
  registryId: number;
  registry: string;
  syncId: number | null;
  now: number;
}

/** Why a sync closes a quarantine on its own: the source went back to the first-seen content. */
export const REVERTED_REASON = 'the source went back to the first-seen content';

const SERVED_SQL = `SELECT t.collection, t.name, v.version, v.id, v.digest, v.tree_sha AS treeSha
  FROM versions v JOIN templates t ON t.id = v.template_id WHERE t.registry_id = ?`;
const FIRST_SEEN_SQL = `SELECT template, version, digest FROM first_seen
  WHERE id IN (SELECT max(id) FROM first_seen WHERE template >= ? AND template < ? GROUP BY template, version)`;
const OPEN_SQL = `SELECT id, template, version, new_digest AS newDigest FROM quarantines
  WHERE accepted_at IS NULL AND template >= ? AND template < ?`;
const SERVED_VERSION_SQL = `SELECT v.kind, v.dir, v.template_file AS templateFile, v.schema_file AS schemaFile,
  v.has_example AS hasExample, v.digest, v.tree_sha AS treeSha, v.schema_json AS schemaJson
  FROM versions v WHERE v.id = ?`;
const SERVED_FILES_SQL = `SELECT vf.path, vf.sha256, vf.size, f.git_sha AS gitSha
  FROM version_files vf JOIN files f ON f.sha256 = vf.sha256 WHERE vf.version_id = ? ORDER BY vf.path`;

function stateOf(
  served: readonly (ServedDigest & { collection: string; name: string; version: string })[],
  firstSeen: readonly { template: string; version: string; digest: string }[],
  open: readonly (OpenQuarantine & { template: string; version: string })[],
): FirstSeenState {
  return {
    served: new Map(served.map((r) => [servedKey(r.collection, r.name, r.version), r])),
    firstSeen: new Map(firstSeen.map((r) => [`${r.template}@${r.version}`, r.digest])),
    open: new Map(open.map((r) => [`${r.template}@${r.version}`, r])),
  };
}

/**
 * The first-seen step of the SQLite swap, inside its transaction and before the old index is
 * deleted: decides (planFirstSeen), keeps the served rows of quarantined versions in `built`,
 * writes first_seen rows, quarantines and closes reverted ones. Returns the records to append to
 * the log (their first_seen rows take log indexes from `logSize`) and the events to announce.
 */
export function firstSeenSqlite(
  db: Database.Database,
  built: BuiltIndex,
  meta: FirstSeenMeta,
  appendLog: (records: readonly LogRecord[]) => number,
): FirstSeenPlan {
  const [lo, hi] = templateRange(meta.registry);
  const state = stateOf(
    db.prepare(SERVED_SQL).all(meta.registryId) as never,
    db.prepare(FIRST_SEEN_SQL).all(lo, hi) as never,
    db.prepare(OPEN_SQL).all(lo, hi) as never,
  );
  const plan = planFirstSeen(built, state, meta);
  if (plan.quarantinedKeys.size > 0) {
    const versionRow = db.prepare(SERVED_VERSION_SQL);
    const fileRows = db.prepare(SERVED_FILES_SQL);
    keepFirstSeen(
      built,
      meta,
      plan.quarantinedKeys,
      (collection, template, version) => {
        const id = state.served.get(servedKey(collection, template, version))?.id;
        const row = id === undefined ? undefined : (versionRow.get(id) as ServedVersion | undefined);
        if (!row) return undefined;
        return { ...row, hasExample: Boolean(row.hasExample), files: fileRows.all(id) as IndexedFile[] };
      },
      plan.quarantined,
    );
  }
  if (plan.records.length > 0) {
    const first = appendLog(plan.records);
    const insert = db.prepare(
      `INSERT INTO first_seen (template, version, digest, supersedes, log_index, registry_id, sync_id, seen_at)
       VALUES (?, ?, ?, NULL, ?, ?, ?, ?)`,
    );
    plan.records.forEach((r, i) => {
      insert.run(r.template, r.version, r.digest, first + i, meta.registryId, meta.syncId, meta.now);
    });
  }
  const insertQ = db.prepare(
    `INSERT INTO quarantines (registry_id, template, version, first_digest, new_digest, changed_files, tree_sha, since)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  );
  const refreshQ = db.prepare(
    'UPDATE quarantines SET new_digest = ?, changed_files = ?, tree_sha = ?, notified_at = NULL WHERE id = ?',
  );
  for (const q of plan.quarantined) {
    const files = JSON.stringify(q.changedFiles);
    if (q.openId === undefined) {
      q.id = (
        insertQ.get(
          q.registryId,
          q.template,
          q.version,
          q.firstDigest,
          q.newDigest,
          files,
          q.treeSha,
          q.since,
        ) as {
          id: number;
        }
      ).id;
    } else {
      refreshQ.run(q.newDigest, files, q.treeSha, q.openId);
      q.id = q.openId;
    }
  }
  const close = db.prepare(
    "UPDATE quarantines SET accepted_at = ?, accepted_by = 'sync', reason = ? WHERE id = ? AND accepted_at IS NULL",
  );
  for (const id of plan.reverted) close.run(meta.now, REVERTED_REASON, id);
  return plan;
}

/** firstSeenSqlite on PostgreSQL, inside the swap's transaction (`client`). */
export async function firstSeenPg(
  client: PgQueryable,
  built: BuiltIndex,
  meta: FirstSeenMeta,
  appendLog: (records: readonly LogRecord[]) => Promise<number>,
): Promise<FirstSeenPlan> {
  const [lo, hi] = templateRange(meta.registry);
  const pg = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  const served = await client.query(pgQuoted(pg(SERVED_SQL)), [meta.registryId]);
  const firstSeen = await client.query(pg(FIRST_SEEN_SQL), [lo, hi]);
  const open = await client.query(pgQuoted(pg(OPEN_SQL)), [lo, hi]);
  const state = stateOf(served.rows, firstSeen.rows, open.rows);
  const plan = planFirstSeen(built, state, meta);
  if (plan.quarantinedKeys.size > 0) {
    const rows = new Map<string, ServedVersion>();
    for (const key of plan.quarantinedKeys) {
      for (const t of built.templates) {
        const template = canonicalTemplate(meta.registry, t.collection, t.name);
        if (!key.startsWith(`${template}@`)) continue;
        const version = key.slice(template.length + 1);
        const id = state.served.get(servedKey(t.collection, t.name, version))?.id;
        if (id === undefined) continue;
        const v = await client.query(pgQuoted(pg(SERVED_VERSION_SQL)), [id]);
        const f = await client.query(pgQuoted(pg(SERVED_FILES_SQL)), [id]);
        if (v.rows[0]) rows.set(servedKey(t.collection, t.name, version), { ...v.rows[0], files: f.rows });
      }
    }
    keepFirstSeen(
      built,
      meta,
      plan.quarantinedKeys,
      (collection, template, version) => rows.get(servedKey(collection, template, version)),
      plan.quarantined,
    );
  }
  if (plan.records.length > 0) {
    const first = await appendLog(plan.records);
    await client.query(
      `INSERT INTO first_seen (template, version, digest, log_index, registry_id, sync_id, seen_at)
       SELECT u.template, u.version, u.digest, u.log_index, $5, $6, $7
       FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS u(template, version, digest, log_index)`,
      [
        plan.records.map((r) => r.template),
        plan.records.map((r) => r.version),
        plan.records.map((r) => r.digest),
        plan.records.map((_, i) => first + i),
        meta.registryId,
        meta.syncId,
        meta.now,
      ],
    );
  }
  for (const q of plan.quarantined) {
    const files = JSON.stringify(q.changedFiles);
    if (q.openId === undefined) {
      const res = await client.query<{ id: number }>(
        `INSERT INTO quarantines (registry_id, template, version, first_digest, new_digest, changed_files, tree_sha, since)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
        [q.registryId, q.template, q.version, q.firstDigest, q.newDigest, files, q.treeSha, q.since],
      );
      q.id = res.rows[0]!.id;
    } else {
      await client.query(
        'UPDATE quarantines SET new_digest = $1, changed_files = $2, tree_sha = $3, notified_at = NULL WHERE id = $4',
        [q.newDigest, files, q.treeSha, q.openId],
      );
      q.id = q.openId;
    }
  }
  if (plan.reverted.length > 0) {
    await client.query(
      "UPDATE quarantines SET accepted_at = $1, accepted_by = 'sync', reason = $2 WHERE id = ANY($3::int[]) AND accepted_at IS NULL",
      [meta.now, REVERTED_REASON, plan.reverted],
    );
  }
  return plan;
}

/** PostgreSQL folds unquoted aliases to lower case: quote the camelCase ones. */
function pgQuoted(sql: string): string {
  return sql.replace(/ AS ([a-z]+[A-Z][A-Za-z]*)/g, ' AS "$1"');
}

/** A version added without a swap, as the first-seen step sees it. */
export interface AddedKey {
  collection: string;
  template: string;
  version: string;
  digest: string;
  /** When it was first seen elsewhere (a bundle's first-seen time, epoch ms); default `now`. */
  seenAt?: number | null;
  /** The first-seen digest this version replaces: a change its upstream accepted (docs/mirroring.md). */
  supersedes?: string | undefined;
}

/** What adding versions decided: the versions to add, and the quarantines opened or refreshed. */
export interface AddedPlan<V> {
  kept: V[];
  quarantined: QuarantineEvent[];
}

/** A quarantine the first-seen record opens for a version whose files were not compared. */
export type QuarantineOpening = Pick<
  QuarantineEvent,
  'registryId' | 'registry' | 'template' | 'version' | 'firstDigest' | 'newDigest' | 'since'
> & { changedFiles?: ChangedFile[] };

/**
 * The decision of firstSeenOfAdded, the same for both dialects: `first` answers the newest
 * first-seen digest of a canonical `template@version`.
 */
function planAdded<V extends AddedKey>(
  meta: FirstSeenMeta,
  versions: readonly V[],
  first: (template: string, version: string) => string | undefined,
): {
  kept: V[];
  records: (LogRecord & { seenAt: number })[];
  openings: QuarantineOpening[];
  accepted: { template: string; version: string; reason: string }[];
} {
  const records: (LogRecord & { seenAt: number })[] = [];
  const openings: QuarantineOpening[] = [];
  const accepted: { template: string; version: string; reason: string }[] = [];
  const kept: V[] = [];
  for (const v of versions) {
    const template = canonicalTemplate(meta.registry, v.collection, v.template);
    const firstDigest = first(template, v.version);
    const record = { template, version: v.version, digest: v.digest };
    if (firstDigest === undefined) {
      // A first-seen time from elsewhere is kept when it is earlier than now, never a later one.
      const seenAt = Math.min(v.seenAt ?? meta.now, meta.now);
      if (recordable(record)) records.push({ ...record, seenAt });
    } else if (firstDigest !== v.digest && v.supersedes === firstDigest) {
      // Accepted upstream: logged here too as a superseding record; an open quarantine closes.
      records.push({ ...record, supersedes: firstDigest, seenAt: meta.now });
      accepted.push({
        template,
        version: v.version,
        reason: `accepted upstream: ${v.digest} supersedes ${firstDigest}`,
      });
    } else if (firstDigest !== v.digest) {
      openings.push({
        registryId: meta.registryId,
        registry: meta.registry,
        template,
        version: v.version,
        firstDigest,
        newDigest: v.digest,
        since: meta.now,
      });
      continue;
    }
    kept.push(v);
  }
  return { kept, records, openings, accepted };
}

/** Closes a version's open quarantine when the served content is its first digest again. */
export const CLOSE_REVERTED_SQL = `UPDATE quarantines SET accepted_at = ?, accepted_by = 'upstream', reason = ?
  WHERE registry_id = ? AND template = ? AND version = ? AND first_digest = ? AND accepted_at IS NULL`;

const CLOSE_ACCEPTED_SQL = `UPDATE quarantines SET accepted_at = ?, accepted_by = 'upstream', reason = ?
  WHERE template = ? AND version = ? AND accepted_at IS NULL`;

const NEWEST_FIRST_SEEN_SQL =
  'SELECT digest FROM first_seen WHERE template = ? AND version = ? ORDER BY id DESC LIMIT 1';
const OPEN_OF_SQL =
  'SELECT id, new_digest AS "newDigest" FROM quarantines WHERE template = ? AND version = ? AND accepted_at IS NULL';

function openingEvent(q: QuarantineOpening, openId: number | undefined, id: number): QuarantineEvent {
  return {
    registryId: q.registryId,
    registry: q.registry,
    template: q.template,
    version: q.version,
    firstDigest: q.firstDigest,
    newDigest: q.newDigest,
    changedFiles: q.changedFiles ?? [],
    treeSha: null,
    since: q.since,
    openId,
    id,
  };
}

/**
 * The first-seen step of adding versions without a swap (a mirror's pull-through or sync, a bundle
 * import; docs/integrity-store.md §6), inside add-versions.ts's transaction: a version never seen
 * is recorded (at its first-seen time from elsewhere when earlier) and appended to the log; one
 * whose digest differs from its first-seen digest is quarantined and left out.
 */
export function firstSeenOfAdded<V extends AddedKey>(
  db: Database.Database,
  meta: FirstSeenMeta,
  versions: readonly V[],
): AddedPlan<V> {
  const newest = db.prepare(NEWEST_FIRST_SEEN_SQL);
  const plan = planAdded(
    meta,
    versions,
    (template, version) => (newest.get(template, version) as { digest: string } | undefined)?.digest,
  );
  if (plan.records.length > 0) {
    const { fromSize } = appendRecordsSqlite(db, plan.records, undefined, meta.now);
    const insert = db.prepare(
      `INSERT INTO first_seen (template, version, digest, supersedes, log_index, registry_id, sync_id, seen_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    plan.records.forEach((r, i) => {
      const supersedes = r.supersedes ?? null;
      insert.run(
        r.template,
        r.version,
        r.digest,
        supersedes,
        fromSize + i,
        meta.registryId,
        meta.syncId,
        r.seenAt,
      );
    });
  }
  const close = db.prepare(CLOSE_ACCEPTED_SQL);
  for (const a of plan.accepted) close.run(meta.now, a.reason, a.template, a.version);
  const quarantined: QuarantineEvent[] = [];
  for (const q of plan.openings) {
    const event = openQuarantine(db, q);
    if (event) quarantined.push(event);
  }
  return { kept: plan.kept, quarantined };
}

/** firstSeenOfAdded on PostgreSQL, inside the caller's transaction (`client`). */
export async function firstSeenOfAddedPg<V extends AddedKey>(
  client: PgQueryable,
  meta: FirstSeenMeta,
  versions: readonly V[],
): Promise<AddedPlan<V>> {
  const firsts = new Map<string, string>();
  if (versions.length > 0) {
    const keys = versions.map((v) => ({
      template: canonicalTemplate(meta.registry, v.collection, v.template),
      version: v.version,
    }));
    const found = await client.query<{ template: string; version: string; digest: string }>(
      `SELECT DISTINCT ON (f.template, f.version) f.template, f.version, f.digest
       FROM first_seen f JOIN unnest($1::text[], $2::text[]) AS k(template, version)
         ON f.template = k.template AND f.version = k.version
       ORDER BY f.template, f.version, f.id DESC`,
      [keys.map((k) => k.template), keys.map((k) => k.version)],
    );
    for (const r of found.rows) firsts.set(`${r.template}@${r.version}`, r.digest);
  }
  const plan = planAdded(meta, versions, (template, version) => firsts.get(`${template}@${version}`));
  if (plan.records.length > 0) {
    const { fromSize } = await appendRecordsPg(client, plan.records, undefined, meta.now);
    await client.query(
      `INSERT INTO first_seen (template, version, digest, supersedes, log_index, registry_id, sync_id, seen_at)
       SELECT u.template, u.version, u.digest, u.supersedes, u.log_index, $7, $8, u.seen_at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])
         AS u(template, version, digest, supersedes, log_index, seen_at)`,
      [
        plan.records.map((r) => r.template),
        plan.records.map((r) => r.version),
        plan.records.map((r) => r.digest),
        plan.records.map((r) => r.supersedes ?? null),
        plan.records.map((_, i) => fromSize + i),
        plan.records.map((r) => r.seenAt),
        meta.registryId,
        meta.syncId,
      ],
    );
  }
  for (const a of plan.accepted) {
    let n = 0;
    await client.query(
      CLOSE_ACCEPTED_SQL.replace(/\?/g, () => `$${++n}`),
      [meta.now, a.reason, a.template, a.version],
    );
  }
  const quarantined: QuarantineEvent[] = [];
  for (const q of plan.openings) {
    const event = await openQuarantinePg(client, q);
    if (event) quarantined.push(event);
  }
  return { kept: plan.kept, quarantined };
}

/**
 * Opens (or refreshes) the quarantine of a version whose new digest is known (a mirror's upstream
 * disagreeing with its first-seen record, or quarantining it itself). The event to announce, or
 * undefined when the open quarantine already says so.
 */
export function openQuarantine(db: Database.Database, q: QuarantineOpening): QuarantineEvent | undefined {
  const open = db.prepare(OPEN_OF_SQL).get(q.template, q.version) as
    | { id: number; newDigest: string }
    | undefined;
  if (open?.newDigest === q.newDigest) return undefined;
  const files = JSON.stringify(q.changedFiles ?? []);
  if (open) {
    db.prepare(
      'UPDATE quarantines SET new_digest = ?, changed_files = ?, notified_at = NULL WHERE id = ?',
    ).run(q.newDigest, files, open.id);
    return openingEvent(q, open.id, open.id);
  }
  const row = db
    .prepare(
      `INSERT INTO quarantines (registry_id, template, version, first_digest, new_digest, changed_files, since)
       VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    )
    .get(q.registryId, q.template, q.version, q.firstDigest, q.newDigest, files, q.since) as { id: number };
  return openingEvent(q, undefined, row.id);
}

/** openQuarantine on PostgreSQL, inside the caller's transaction or on the pool. */
export async function openQuarantinePg(
  client: PgQueryable,
  q: QuarantineOpening,
): Promise<QuarantineEvent | undefined> {
  const pg = (text: string) => {
    let n = 0;
    return text.replace(/\?/g, () => `$${++n}`);
  };
  const open = (
    await client.query<{ id: number; newDigest: string }>(pg(OPEN_OF_SQL), [q.template, q.version])
  ).rows[0];
  if (open?.newDigest === q.newDigest) return undefined;
  const files = JSON.stringify(q.changedFiles ?? []);
  if (open) {
    await client.query(
      'UPDATE quarantines SET new_digest = $1, changed_files = $2, notified_at = NULL WHERE id = $3',
      [q.newDigest, files, open.id],
    );
    return openingEvent(q, open.id, open.id);
  }
  const row = await client.query<{ id: number }>(
    `INSERT INTO quarantines (registry_id, template, version, first_digest, new_digest, changed_files, since)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [q.registryId, q.template, q.version, q.firstDigest, q.newDigest, files, q.since],
  );
  return openingEvent(q, undefined, row.rows[0]!.id);
}
