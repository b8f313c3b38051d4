/**
 * The first-seen record's decision inside an index swap (docs/integrity-store.md §2), the same for
 * both dialects: each version of a newly built index is compared with the newest first-seen digest
 * of its key. A version never seen is recorded (and appended to the checksum log); one whose
 * digest changed is quarantined: the served (first-seen) rows replace it in the new index, so no
 * read path can serve the new bytes. The dialects only load the rows and write what this module
 * decides (sqlite/first-seen.ts, postgres/first-seen.ts). Its SQL has `$n` placeholders (sql.ts).
 */
import { encodeRecord, type LogRecord } from '../../../client/src/integrity/index.js';
import { formatTemplateName } from '../../../client/src/reference/index.js';
import type { ChangedFile } from '../../../client/src/wire/registry-api.js';
import {
  type BuiltIndex,
  type IndexedFile,
  type IndexedVersion,
  latestOf,
  schemaInfo,
} from '../indexer/build-index.js';
import type { QuarantineEvent } from './contract.js';

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
