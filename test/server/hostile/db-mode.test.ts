/**
 * Issue 15 item 12: a new registry database (token hashes, encrypted credentials) is created
 * readable by its owner only, like the key file beside it; so are SQLite's -wal and -shm files.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openStore } from '../../../server/src/store/sqlite/open.js';

describe('hostile: database file mode', () => {
  it('creates the database, its WAL and shared-memory files with mode 0600', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dm-db-mode-'));
    try {
      const file = join(dir, 'data', 'registry.db');
      const store = openStore(file);
      try {
        store.sqlite
          .prepare(
            "INSERT INTO credentials (name, kind, secret, created_at, updated_at) VALUES ('c', 'git-token', 'x', 0, 0)",
          )
          .run();
        for (const f of [file, `${file}-wal`, `${file}-shm`]) {
          assert.ok(existsSync(f), `${f} exists`);
          assert.equal((statSync(f).mode & 0o777).toString(8), '600', f);
        }
      } finally {
        store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
