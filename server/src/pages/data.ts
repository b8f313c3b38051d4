/**
 * What the pages read from the store besides the API's own code (search, catalog, registry info):
 * a template's row and versions, one file's text, findings under a directory, a registry's
 * templates. Statements are prepared once per store.
 */
import type Database from 'better-sqlite3';
import { compareVersions, tryParseVersion } from '../../../client/src/reference/version.js';
import type { Store } from '../store/db.js';

export interface TemplateRow {
  latestVersion: string | null;
  title: string | null;
  description: string | null;
}

export interface VersionRow {
  id: number;
  version: string;
  kind: string;
  digest: string;
  dir: string;
  hasExample: number;
}

export interface FindingRow {
  code: string;
  severity: string;
  path: string;
  message: string;
}

export interface RegistryTemplateRow {
  collection: string;
  name: string;
  latestVersion: string | null;
  title: string | null;
}

/** Largest file shown inline (example.yaml); bigger ones are linked only. */
export const MAX_INLINE_BYTES = 64 * 1024;

export class PageData {
  private readonly s: Record<string, Database.Statement>;

  constructor(store: Store) {
    const db = store.sqlite;
    this.s = {
      template: db.prepare(
        'SELECT latest_version AS latestVersion, title, description FROM templates WHERE registry_id = ? AND collection = ? AND name = ?',
      ),
      versions: db.prepare(
        `SELECT v.id, v.version, v.kind, v.digest, v.dir, v.has_example AS hasExample
         FROM versions v JOIN templates t ON t.id = v.template_id
         WHERE t.registry_id = ? AND t.collection = ? AND t.name = ?`,
      ),
      file: db.prepare(
        `SELECT f.content FROM version_files vf JOIN files f ON f.sha256 = vf.sha256
         WHERE vf.version_id = ? AND vf.path = ? AND vf.size <= ${MAX_INLINE_BYTES}`,
      ),
      findings: db.prepare(
        `SELECT code, severity, path, message FROM findings
         WHERE registry_id = ? AND (path = ? OR substr(path, 1, length(?) + 1) = ? || '/')
         ORDER BY path, code`,
      ),
      templates: db.prepare(
        `SELECT collection, name, latest_version AS latestVersion, title FROM templates
         WHERE registry_id = ? ORDER BY collection, name`,
      ),
    };
  }

  template(registryId: number, collection: string, name: string): TemplateRow | undefined {
    return this.s.template!.get(registryId, collection, name) as TemplateRow | undefined;
  }

  /** Versions, newest first (semver order). */
  versions(registryId: number, collection: string, name: string): VersionRow[] {
    const rows = this.s.versions!.all(registryId, collection, name) as VersionRow[];
    return rows.sort((a, b) => {
      const va = tryParseVersion(a.version);
      const vb = tryParseVersion(b.version);
      if (!va || !vb) return a.version < b.version ? 1 : -1;
      return compareVersions(vb, va) || (a.version < b.version ? 1 : -1);
    });
  }

  /** A file of a version as UTF-8 text, when it exists and is small enough to show. */
  fileText(versionId: number, path: string): string | undefined {
    const row = this.s.file!.get(versionId, path) as { content: Buffer } | undefined;
    return row ? row.content.toString('utf8') : undefined;
  }

  /** Findings at or under a registry-relative directory. */
  findingsUnder(registryId: number, dir: string): FindingRow[] {
    return this.s.findings!.all(registryId, dir, dir, dir) as FindingRow[];
  }

  templates(registryId: number): RegistryTemplateRow[] {
    return this.s.templates!.all(registryId) as RegistryTemplateRow[];
  }
}
