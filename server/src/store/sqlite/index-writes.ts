// SQLite only: the better-sqlite3 statements that write index rows, and the FTS5 search rows of templates.
/**
 * The statements that write index rows on SQLite (content, templates with their search rows,
 * versions and their files): prepared once per swap on better-sqlite3 directly (sqlite/swap-index.ts),
 * and the search rows of templates that adding versions writes (../add-versions.ts `SearchRowSteps`):
 * SQLite's full-text search keeps them in the FTS5 table `templates_fts`, by the template's id.
 */
import type Database from 'better-sqlite3';
import type { SearchRowSteps } from '../add-versions.js';
import { listParam, type Step } from '../sql.js';

export function prepareIndexWrites(db: Database.Database) {
  return {
    insertFile: db.prepare(
      'INSERT INTO files (sha256, git_sha, size, content) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    ),
    insertTemplate: db.prepare(
      `INSERT INTO templates (registry_id, collection, name, latest_version, title, description)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    insertFts: db.prepare(
      'INSERT INTO templates_fts (rowid, name, collection, title, description, properties, registry_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    insertVersion: db.prepare(
      `INSERT INTO versions (template_id, registry_id, version, kind, dir, template_file, schema_file, has_example, digest, schema_json, tree_sha)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertVersionFile: db.prepare(
      'INSERT INTO version_files (version_id, path, sha256, size) VALUES (?, ?, ?, ?)',
    ),
  };
}

/** A template's FTS row replaced (or written, for a new template) from its new latest version. */
export const sqliteSearchRows: SearchRowSteps = (d, rows) => {
  const steps: Step[] = [];
  const old = rows.filter((r) => !r.fresh);
  if (old.length > 0) {
    steps.push([
      `DELETE FROM templates_fts WHERE rowid IN (SELECT s.id FROM ${d.list('$1', 's', [['id', 'int']])})`,
      [listParam(old.map((r) => [r.id]))],
    ]);
  }
  steps.push(
    ...d.insertRows(
      'templates_fts',
      [
        ['rowid', 'int'],
        ['name', 'text'],
        ['collection', 'text'],
        ['title', 'text'],
        ['description', 'text'],
        ['properties', 'text'],
        ['registry_id', 'int'],
      ],
      rows.map((r) => [
        r.id,
        r.name,
        r.collection,
        r.title ?? '',
        r.description ?? '',
        r.properties,
        r.registryId,
      ]),
    ),
  );
  return steps;
};
