// PostgreSQL only: the search fields of added versions' templates are a column (properties), and a new generation is announced with pg_notify; the flow and its rules are ../add-versions.ts.
/**
 * Adding versions on PostgreSQL (docs/mirroring.md): ../add-versions.ts's flow, the same as on
 * SQLite, over postgres/runner.ts, where adds to one registry are serialised across replicas by a
 * transaction-scoped advisory lock on its name (the runner's keyLock). What is PostgreSQL's own:
 * a template's search words are its `properties` column, and the registry's new generation is
 * announced with `pg_notify` like an index swap, so every replica drops its cached answers for it.
 */
import type { SearchRowSteps } from '../add-versions.js';
import type { MirrorQueries } from '../contract.js';
import { mirrorQueriesOf } from '../mirror-queries.js';
import { listParam, type SqlRunner } from '../sql.js';
import { INDEX_CHANNEL } from './swap-index.js';

const postgresSearchRows: SearchRowSteps = (d, rows) => [
  [
    `UPDATE templates SET properties = s.properties FROM ${d.list('$1', 's', [
      ['id', 'int'],
      ['properties', 'text'],
    ])} WHERE templates.id = s.id`,
    [listParam(rows.map((r) => [r.id, r.properties]))],
  ],
];

export function postgresMirrorQueries(runner: SqlRunner): MirrorQueries {
  return mirrorQueriesOf(runner, {
    search: postgresSearchRows,
    announce: (generations) =>
      generations.map((g) => [
        'SELECT pg_notify($1, $2)',
        [INDEX_CHANNEL, `${g.registryId}:${g.generation}`],
      ]),
  });
}
