/**
 * Issue 15 item 8 (archives): an archive is built once per version digest, compressed off the
 * request thread; concurrent and later requests get the same bytes from the cache, the bytes of the
 * one archive writer over the version's files.
 */
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { versionTarGz } from '../../../client/src/registry/index.js';
import { archiveCache } from '../../../server/src/api/version-archive.js';
import { DIALECTS, FIXTURES, tempDir, testServerOn } from '../helpers.js';

for (const dialect of DIALECTS) {
  describe(`hostile: archive requests (${dialect})`, () => {
    it('20 concurrent and 20 later requests for one archive build it once', async () => {
      const s = await testServerOn(dialect);
      // A version of its own digest: the cache is the process's, shared by both dialects' runs.
      const source = tempDir('dm-archive-');
      cpSync(join(FIXTURES, 'redis'), join(source, 'redis'), { recursive: true });
      writeFileSync(join(source, 'redis', 'v1.0.3', 'NOTES.txt'), `${dialect}\n`);
      try {
        const row = await s.service.add({ source, name: 'github.com/acme/arch' });
        assert.equal((await s.service.sync(row.id, 'manual')).status, 'succeeded');
        const path = '/api/v1/templates/github.com/acme/arch/redis/versions/v1.0.3/archive.tar.gz';
        const before = archiveCache.builds;
        const first = await Promise.all(Array.from({ length: 20 }, () => s.app.request(path)));
        const bodies = await Promise.all(first.map(async (r) => Buffer.from(await r.arrayBuffer())));
        for (const r of first) assert.equal(r.status, 200);
        for (let i = 0; i < 20; i++) {
          const again = await s.app.request(path);
          assert.equal(again.status, 200);
          assert.ok(Buffer.from(await again.arrayBuffer()).equals(bodies[0]!));
        }
        assert.equal(archiveCache.builds - before, 1);
        assert.ok(bodies.every((b) => b.equals(bodies[0]!)));
        assert.ok(gunzipSync(bodies[0]!).includes(Buffer.from('redis-v1.0.3/')));
        // Built a file at a time (version-archive.ts), the bytes of the one writer over the files.
        const dir = join(source, 'redis', 'v1.0.3');
        const files = readdirSync(dir, { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => {
            const path = join(e.parentPath, e.name);
            return { path: relative(dir, path).split(sep).join('/'), content: readFileSync(path) };
          });
        assert.ok((await versionTarGz(files, 'redis-v1.0.3')).equals(bodies[0]!));
      } finally {
        await s.close();
        rmSync(source, { recursive: true, force: true });
      }
    });
  });
}
