// SQLite only: the better-sqlite3 statements that write index rows, shared by the swap and by added versions.
/**
 * The statements that write index rows (content, templates with their search rows, versions and
 * their files), prepared once per call on better-sqlite3 directly: shared by the index swap
 * (sqlite/swap-index.ts) and by adding single versions (add-versions.ts), so both write the same rows.
 */
import type Database from 'better-sqlite3';

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
