// PostgreSQL only: the first-seen step's reads and writes on a pool client, batched over arrays (unnest), inside the caller's transaction; the decisions are ../first-seen.ts's.
/**
 * The first-seen record on PostgreSQL (docs/integrity-store.md §2, §6): loads what
 * ../first-seen.ts decides on and writes what it decided, inside the index swap's or the added
 * versions' transaction.
 */

import type { LogRecord } from '../../../../client/src/integrity/index.js';
import type { BuiltIndex } from '../../indexer/build-index.js';
import type { QuarantineEvent } from '../contract.js';
import {
  type AddedKey,
  type AddedPlan,
  CLOSE_ACCEPTED_SQL,
  canonicalTemplate,
  FIRST_SEEN_SQL,
  type FirstSeenMeta,
  type FirstSeenPlan,
  keepFirstSeen,
  OPEN_OF_SQL,
  OPEN_SQL,
  openingEvent,
  planAdded,
  planFirstSeen,
  type QuarantineOpening,
  REVERTED_REASON,
  SERVED_FILES_SQL,
  SERVED_SQL,
  SERVED_VERSION_SQL,
  type ServedVersion,
  servedKey,
  stateOf,
  templateRange,
} from '../first-seen.js';
import { appendRecordsPg, type PgQueryable } from './checksum-log.js';

/** firstSeenSqlite on PostgreSQL, inside the swap's transaction (`client`). */
export async function firstSeenPg(
  client: PgQueryable,
  built: BuiltIndex,
  meta: FirstSeenMeta,
  appendLog: (records: readonly LogRecord[]) => Promise<number>,
): Promise<FirstSeenPlan> {
  const [lo, hi] = templateRange(meta.registry);
  const served = await client.query(SERVED_SQL, [meta.registryId]);
  const firstSeen = await client.query(FIRST_SEEN_SQL, [lo, hi]);
  const open = await client.query(OPEN_SQL, [lo, hi]);
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
        const v = await client.query(SERVED_VERSION_SQL, [id]);
        const f = await client.query(SERVED_FILES_SQL, [id]);
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
    await client.query(CLOSE_ACCEPTED_SQL, [meta.now, a.reason, a.template, a.version]);
  }
  const quarantined: QuarantineEvent[] = [];
  for (const q of plan.openings) {
    const event = await openQuarantinePg(client, q);
    if (event) quarantined.push(event);
  }
  return { kept: plan.kept, quarantined };
}

/** openQuarantine on PostgreSQL, inside the caller's transaction or on the pool. */
export async function openQuarantinePg(
  client: PgQueryable,
  q: QuarantineOpening,
): Promise<QuarantineEvent | undefined> {
  const open = (await client.query<{ id: number; newDigest: string }>(OPEN_OF_SQL, [q.template, q.version]))
    .rows[0];
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
