/**
 * The first-seen record (docs/integrity-store.md §2, §6), the same for both dialects: the rules
 * (planFirstSeen, planAdded, keepFirstSeen) and the flows that load their inputs and write what
 * they decide (firstSeenFlow inside an index swap, addedFirstSeenFlow when versions are added
 * without one, openQuarantineFlow), as `$n` SQL over sql.ts's Flow. Each dialect's runner drives
 * them inside its own transaction. In a swap, each version of the new index is compared with the
 * newest first-seen digest of its key: a version never seen is recorded (and appended to the
 * checksum log); one whose digest changed is quarantined: the served (first-seen) rows replace it
 * in the new index, so no read path can serve the new bytes.
 */
import { encodeRecord, type LogRecord, type LogSigner } from '../../../client/src/integrity/index.js';
import { formatTemplateName } from '../../../client/src/reference/index.js';
import type { ChangedFile } from '../../../client/src/wire/registry-api.js';
import {
  type BuiltIndex,
  type IndexedFile,
  type IndexedVersion,
  latestOf,
  schemaInfo,
} from '../indexer/build-index.js';
import { appendRecordsFlow } from './checksum-log.js';
import type { QuarantineEvent } from './contract.js';
import type { Flow, KeyedRead, SqlDialect } from './sql.js';
import { batchesOf, insertRowsFlow, listParam, lookupFlow, rowsOf } from './sql.js';

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

export const SERVED_SQL = `SELECT t.collection, t.name, v.version, v.id, v.digest, v.tree_sha AS "treeSha"
  FROM versions v JOIN templates t ON t.id = v.template_id WHERE t.registry_id = $1`;
export const FIRST_SEEN_SQL = `SELECT template, version, digest FROM first_seen
  WHERE id IN (SELECT max(id) FROM first_seen WHERE template >= $1 AND template < $2 GROUP BY template, version)`;
export const OPEN_SQL = `SELECT id, template, version, new_digest AS "newDigest" FROM quarantines
  WHERE accepted_at IS NULL AND template >= $1 AND template < $2`;
export const SERVED_VERSION_SQL = `SELECT v.kind, v.dir, v.template_file AS "templateFile", v.schema_file AS "schemaFile",
  v.has_example AS "hasExample", v.digest, v.tree_sha AS "treeSha", v.schema_json AS "schemaJson"
  FROM versions v WHERE v.id = $1`;
export const SERVED_FILES_SQL = `SELECT vf.path, vf.sha256, vf.size, f.git_sha AS "gitSha"
  FROM version_files vf JOIN files f ON f.sha256 = vf.sha256 WHERE vf.version_id = $1 ORDER BY vf.path`;

export function stateOf(
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
export function planAdded<V extends AddedKey>(
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
export const CLOSE_REVERTED_SQL = `UPDATE quarantines SET accepted_at = $1, accepted_by = 'upstream', reason = $2
  WHERE registry_id = $3 AND template = $4 AND version = $5 AND first_digest = $6 AND accepted_at IS NULL`;

export const CLOSE_ACCEPTED_SQL = `UPDATE quarantines SET accepted_at = $1, accepted_by = 'upstream', reason = $2
  WHERE template = $3 AND version = $4 AND accepted_at IS NULL`;

export const NEWEST_FIRST_SEEN_SQL =
  'SELECT digest FROM first_seen WHERE template = $1 AND version = $2 ORDER BY id DESC LIMIT 1';
export const OPEN_OF_SQL =
  'SELECT id, new_digest AS "newDigest" FROM quarantines WHERE template = $1 AND version = $2 AND accepted_at IS NULL';

export function openingEvent(q: QuarantineOpening, openId: number | undefined, id: number): QuarantineEvent {
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

/** A first_seen row to insert. */
interface FirstSeenInsert {
  template: string;
  version: string;
  digest: string;
  supersedes: string | null;
  logIndex: number;
  seenAt: number;
}

/** Inserts first_seen rows, a statement per LIST_ROWS rows. */
function* insertFirstSeen(
  d: SqlDialect,
  rows: readonly FirstSeenInsert[],
  meta: Pick<FirstSeenMeta, 'registryId' | 'syncId'>,
): Flow<void> {
  yield* insertRowsFlow(
    d,
    'first_seen',
    [
      ['template', 'text'],
      ['version', 'text'],
      ['digest', 'text'],
      ['supersedes', 'text'],
      ['log_index', 'bigint'],
      ['registry_id', 'int'],
      ['sync_id', 'int'],
      ['seen_at', 'bigint'],
    ],
    rows.map((r) => [
      r.template,
      r.version,
      r.digest,
      r.supersedes,
      r.logIndex,
      meta.registryId,
      meta.syncId,
      r.seenAt,
    ]),
  );
}

type ServedRow = Omit<ServedVersion, 'files' | 'hasExample'> & { hasExample: boolean | number };

const INSERT_QUARANTINE_SQL = `INSERT INTO quarantines (registry_id, template, version, first_digest, new_digest, changed_files, tree_sha, since)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`;
const REFRESH_QUARANTINE_SQL =
  'UPDATE quarantines SET new_digest = $1, changed_files = $2, tree_sha = $3, notified_at = NULL WHERE id = $4';

/**
 * The first-seen step of an index swap, inside its transaction and before the old index is
 * deleted: decides (planFirstSeen), keeps the served rows of quarantined versions in `built`,
 * appends the new records to the checksum log (signed with `signer`) and writes their first_seen
 * rows, opens or refreshes quarantines and closes reverted ones. The plan's events are announced
 * after the commit.
 */
export function* firstSeenFlow(
  d: SqlDialect,
  built: BuiltIndex,
  meta: FirstSeenMeta,
  signer: LogSigner | undefined,
): Flow<FirstSeenPlan> {
  const [lo, hi] = templateRange(meta.registry);
  const state = stateOf(
    yield* rowsOf(SERVED_SQL, [meta.registryId]),
    yield* rowsOf(FIRST_SEEN_SQL, [lo, hi]),
    yield* rowsOf(OPEN_SQL, [lo, hi]),
  );
  const plan = planFirstSeen(built, state, meta);
  if (plan.quarantinedKeys.size > 0) {
    const rows = new Map<string, ServedVersion>();
    for (const t of built.templates) {
      const template = canonicalTemplate(meta.registry, t.collection, t.name);
      for (const v of t.versions) {
        if (!plan.quarantinedKeys.has(`${template}@${v.version}`)) continue;
        const key = servedKey(t.collection, t.name, v.version);
        const id = state.served.get(key)?.id;
        if (id === undefined) continue;
        const [row] = yield* rowsOf<ServedRow>(SERVED_VERSION_SQL, [id]);
        if (!row) continue;
        const files = yield* rowsOf<IndexedFile>(SERVED_FILES_SQL, [id]);
        rows.set(key, { ...row, hasExample: Boolean(row.hasExample), files });
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
    const { fromSize } = yield* appendRecordsFlow(d, plan.records, signer, meta.now);
    yield* insertFirstSeen(
      d,
      plan.records.map((r, i) => ({ ...r, supersedes: null, logIndex: fromSize + i, seenAt: meta.now })),
      meta,
    );
  }
  for (const q of plan.quarantined) {
    const files = JSON.stringify(q.changedFiles);
    if (q.openId === undefined) {
      const [row] = yield* rowsOf<{ id: number }>(INSERT_QUARANTINE_SQL, [
        q.registryId,
        q.template,
        q.version,
        q.firstDigest,
        q.newDigest,
        files,
        q.treeSha,
        q.since,
      ]);
      q.id = row!.id;
    } else {
      yield [REFRESH_QUARANTINE_SQL, [q.newDigest, files, q.treeSha, q.openId]];
      q.id = q.openId;
    }
  }
  for (const batch of batchesOf(plan.reverted)) {
    yield [
      `UPDATE quarantines SET accepted_at = $1, accepted_by = 'sync', reason = $2
       WHERE accepted_at IS NULL AND id IN (SELECT c.id FROM ${d.list('$3', 'c', [['id', 'int']])})`,
      [meta.now, REVERTED_REASON, listParam(batch.map((id) => [id]))],
    ];
  }
  return plan;
}

/** The newest first-seen digest of a version, by key. */
const NEWEST_FIRST_SEEN: KeyedRead = {
  keys: [
    ['template', 'text'],
    ['version', 'text'],
  ],
  sql: (keys) => `SELECT k.at, f.digest FROM ${keys} CROSS JOIN first_seen f
      WHERE f.id = (SELECT max(n.id) FROM first_seen n WHERE n.template = k.template AND n.version = k.version)`,
};

/**
 * The first-seen step of adding versions without a swap (a mirror's pull-through or sync, a bundle
 * import; docs/integrity-store.md §6), inside the caller's transaction: a version never seen is
 * recorded (at its first-seen time from elsewhere when earlier) and appended to the log; one
 * whose digest differs from its first-seen digest is quarantined and left out; one whose upstream
 * accepted the change supersedes its record and closes its open quarantine.
 */
export function* addedFirstSeenFlow<V extends AddedKey>(
  d: SqlDialect,
  meta: FirstSeenMeta,
  versions: readonly V[],
): Flow<AddedPlan<V>> {
  const keys = versions.map((v) => [canonicalTemplate(meta.registry, v.collection, v.template), v.version]);
  const found = yield* lookupFlow<{ at: number; digest: string }>(d, NEWEST_FIRST_SEEN, keys);
  const firsts = new Map(found.map((r) => [`${keys[r.at]![0]}@${keys[r.at]![1]}`, r.digest]));
  const plan = planAdded(meta, versions, (template, version) => firsts.get(`${template}@${version}`));
  if (plan.records.length > 0) {
    const { fromSize } = yield* appendRecordsFlow(d, plan.records, undefined, meta.now);
    yield* insertFirstSeen(
      d,
      plan.records.map((r, i) => ({
        template: r.template,
        version: r.version,
        digest: r.digest,
        supersedes: r.supersedes ?? null,
        logIndex: fromSize + i,
        seenAt: r.seenAt,
      })),
      meta,
    );
  }
  for (const a of plan.accepted) yield [CLOSE_ACCEPTED_SQL, [meta.now, a.reason, a.template, a.version]];
  const quarantined: QuarantineEvent[] = [];
  for (const q of plan.openings) {
    const event = yield* openQuarantineFlow(q);
    if (event) quarantined.push(event);
  }
  return { kept: plan.kept, quarantined };
}

/**
 * Opens (or refreshes) the quarantine of a version whose new digest is known (a mirror's upstream
 * disagreeing with its first-seen record, or quarantining it itself), inside the caller's
 * transaction. The event to announce, or undefined when the open quarantine already says so.
 */
export function* openQuarantineFlow(q: QuarantineOpening): Flow<QuarantineEvent | undefined> {
  const [open] = yield* rowsOf<{ id: number; newDigest: string }>(OPEN_OF_SQL, [q.template, q.version]);
  if (open?.newDigest === q.newDigest) return undefined;
  const files = JSON.stringify(q.changedFiles ?? []);
  if (open) {
    yield [
      'UPDATE quarantines SET new_digest = $1, changed_files = $2, notified_at = NULL WHERE id = $3',
      [q.newDigest, files, open.id],
    ];
    return openingEvent(q, open.id, open.id);
  }
  const [row] = yield* rowsOf<{ id: number }>(
    `INSERT INTO quarantines (registry_id, template, version, first_digest, new_digest, changed_files, since)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [q.registryId, q.template, q.version, q.firstDigest, q.newDigest, files, q.since],
  );
  return openingEvent(q, undefined, row!.id);
}
