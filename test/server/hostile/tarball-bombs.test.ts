/**
 * Issue 15 item 3: tarballs that used to hang a sync forever (one file over the size bound; a few
 * KiB of gzip that inflate to GiBs) now fail it promptly, through a real dm-registry process and
 * the GitHub stand-in; the server keeps answering and later syncs run. A source that never answers
 * fails the sync at its overall deadline and releases the registry.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createGzip } from 'node:zlib';
import { commitDirectory, startGitHubStandin } from '../../github-standin/standin.js';
import { DIALECTS, FIXTURES, tempDir, testServerOn } from '../helpers.js';
import { tarOf } from '../tar-fixtures.js';
import { ADMIN, startRegistry } from './process.js';

const auth = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
const MiB = 1024 * 1024;

/** A gzipped tar of `count` files of `size` zero bytes under `top/`: a few KiB per GiB. */
async function zeroBomb(top: string, count: number, size: number): Promise<Buffer> {
  const one = tarOf([{ path: `${top}/z/v1/0.bin`, content: 'x' }]);
  const header = one.subarray(0, 512);
  const parts: Buffer[] = [];
  const zero = Buffer.alloc(size);
  for (let i = 0; i < count; i++) {
    const h = Buffer.from(header);
    h.fill(0, 0, 100);
    h.write(`${top}/z/v1/${i}.bin`, 0, 100, 'utf8');
    h.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
    h.write('        ', 148, 'ascii');
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0`, 148, 'ascii');
    parts.push(h, zero);
  }
  parts.push(Buffer.alloc(1024));
  // Streamed: the inflated archive never exists in one piece here either.
  const gzip = createGzip();
  const out: Buffer[] = [];
  gzip.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((resolve, reject) => {
    gzip.on('end', resolve);
    gzip.on('error', reject);
  });
  for (const part of parts) if (!gzip.write(part)) await new Promise((r) => gzip.once('drain', r));
  gzip.end();
  await done;
  return Buffer.concat(out);
}

for (const dialect of DIALECTS) {
  describe(`hostile: tarball bombs and silent sources (${dialect})`, () => {
    it('a file over the bound and 31 × 32 MiB of zeros fail their syncs promptly; the server keeps serving', async () => {
      const dir = tempDir('dm-hostile-tar-');
      // Templates the fresh server has never seen: the sync needs the tarball (more than 2 new blobs).
      const gitDir = join(dir, 'repo');
      commitDirectory(FIXTURES, gitDir);
      const overFile = await zeroBomb('acme-big-0000000', 1, 33 * MiB);
      const zerosBomb = await zeroBomb('acme-zeros-0000000', 31, 32 * MiB);
      assert.ok(zerosBomb.length < 2 * MiB, `bomb is ${zerosBomb.length} bytes`);
      const standin = await startGitHubStandin({
        repos: {
          'acme/big': { gitDir, tarball: overFile },
          'acme/zeros': { gitDir, tarball: zerosBomb },
        },
      });
      const server = await startRegistry([], {
        env: { GITHUB_API_URL: standin.url },
        nodeArgs: ['--max-old-space-size=256'],
        dialect,
      });
      try {
        for (const repo of ['acme/big', 'acme/zeros']) {
          const added = await fetch(`${server.url}/api/v1/registries`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify({ source: `github.com/${repo}` }),
          });
          assert.equal(added.status, 201);
          const { id } = (await added.json()) as { id: number };
          // Waits for the initial sync and one more: both answer, failed, ARCHIVE_TOO_LARGE.
          const res = await fetch(`${server.url}/api/v1/registries/${id}/sync`, {
            method: 'POST',
            headers: auth,
          });
          assert.equal(res.status, 200);
          const outcome = (await res.json()) as { status: string; error?: { code: string } };
          assert.equal(outcome.status, 'failed', repo);
          assert.equal(outcome.error?.code, 'ARCHIVE_TOO_LARGE', repo);
        }
        const ok = await fetch(`${server.url}/healthz`);
        assert.equal(ok.status, 200);
        assert.equal(server.exited(), undefined, server.log());
        assert.equal(await server.stop(), 0);
      } finally {
        server.dispose();
        await standin.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a source that never answers fails the sync at its deadline and the registry syncs again', async () => {
      const sockets: Socket[] = [];
      const silent = createServer((socket) => {
        sockets.push(socket);
      });
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      const port = (silent.address() as { port: number }).port;
      const s = await testServerOn(dialect, {
        githubApiUrl: `http://127.0.0.1:${port}`,
        syncDeadlineMs: 300,
      });
      try {
        const row = await s.service.add({ source: 'github.com/acme/silent' });
        const first = await s.service.sync(row.id, 'manual');
        assert.equal(first.status, 'failed');
        assert.equal(first.error?.code, 'SYNC_TIMEOUT');
        assert.equal(s.service.queue.isRunning(row.id), false);
        const second = await s.service.sync(row.id, 'manual');
        assert.equal(second.error?.code, 'SYNC_TIMEOUT');
        assert.ok(second.syncId !== null && first.syncId !== null && second.syncId > first.syncId);
      } finally {
        await s.close();
        for (const socket of sockets) socket.destroy();
        silent.close();
      }
    });
  });
}
