/**
 * Issue 25 (archives; docs/server.md "Bounds on one caller's work"): an archive is built a file at
 * a time with a turn of the event loop before each read, compressed as a stream on libuv's threads,
 * and gives the same bytes as the one-shot writer (`versionTarGz`, what OCI layers and `dm push`
 * use) for any files: a property test compares the two. Builds are bounded work: beyond the running
 * and waiting ones a build is refused with SERVER_BUSY; a failing read fails only its build.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../../../client/src/error.js';
import { versionTarGz } from '../../../client/src/registry/index.js';
import { ArchiveCache, type ArchiveSource } from '../../../server/src/api/version-archive.js';

/** A source over files in memory, recording the event-loop turn of each read. */
function sourceOf(
  files: ReadonlyMap<string, Buffer>,
  turnOf?: () => number,
  reads: number[] = [],
): ArchiveSource {
  return {
    paths: async () => [...files.keys()],
    content: async (path) => {
      if (turnOf) reads.push(turnOf());
      const content = files.get(path);
      if (!content) throw new Error(`no ${path}`);
      return content;
    },
  };
}

const pathArb = fc
  .array(fc.stringMatching(/^[a-z0-9._-]{1,12}$/), { minLength: 1, maxLength: 3 })
  .map((parts) => parts.join('/'));
const contentArb = fc.oneof(
  fc.uint8Array({ maxLength: 1500 }).map((a) => Buffer.from(a)),
  fc.string({ maxLength: 3000 }).map((t) => Buffer.from(t)),
  // Large enough that the gzip stream asks the writer to wait for it to drain.
  fc.integer({ min: 100_000, max: 600_000 }).map((n) => Buffer.from(randomBytes(n).toString('base64'))),
);

describe('hostile: archive builds', () => {
  it('give the bytes of the one-shot writer for any files (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(pathArb, contentArb), { minLength: 0, maxLength: 12, selector: ([p]) => p }),
        fc.constantFrom('', 'tpl-v1.0.0'),
        async (entries, root) => {
          const files = new Map(entries);
          const cache = new ArchiveCache();
          const streamed = await cache.get(`sha256:${randomBytes(8).toString('hex')}`, root, sourceOf(files));
          const oneShot = await versionTarGz(
            entries.map(([path, content]) => ({ path, content })),
            root,
          );
          assert.ok(streamed.equals(oneShot), `${entries.length} files under '${root}'`);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('read one file at a time, with a turn of the event loop before each', async () => {
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const files = new Map(
      Array.from({ length: 200 }, (_, i) => [`f/${i}.txt`, Buffer.from(`${i}\n`)] as const),
    );
    const reads: number[] = [];
    try {
      const archive = await new ArchiveCache().get(
        'sha256:turns',
        'x',
        sourceOf(files, () => turns, reads),
      );
      assert.ok(archive.length > 0);
    } finally {
      ticking = false;
    }
    assert.equal(reads.length, 200);
    for (let i = 1; i < reads.length; i++) {
      assert.ok(reads[i]! > reads[i - 1]!, `read ${i} in the same turn as read ${i - 1}`);
    }
  });

  it('are bounded: beyond the running and waiting builds, SERVER_BUSY; a failed read fails its build only', async () => {
    const cache = new ArchiveCache(64 * 1024 * 1024, { concurrency: 1, queue: 1 });
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const gated: ArchiveSource = {
      paths: async () => ['a.txt'],
      content: async () => {
        await gate;
        return Buffer.from('a\n');
      },
    };
    const first = cache.get('sha256:one', 'r', gated);
    const second = cache.get('sha256:two', 'r', gated);
    // The same digest shares the first build: not a third build.
    const shared = cache.get('sha256:one', 'r', gated);
    await assert.rejects(cache.get('sha256:three', 'r', gated), (error: unknown) => {
      assert.ok(error instanceof DmError);
      assert.equal(error.code, 'SERVER_BUSY');
      return true;
    });
    open();
    const [a, b, c] = await Promise.all([first, second, shared]);
    assert.ok(a.equals(c) && a.equals(b));
    assert.equal(cache.builds, 2);
    assert.equal(cache.admission.counters.peakRunning, 1);
    assert.equal(cache.admission.counters.refused, 1);

    await assert.rejects(
      cache.get('sha256:broken', 'r', sourceOf(new Map([['a.txt', Buffer.from('a')]]))).then(() =>
        cache.get('sha256:broken2', 'r', {
          paths: async () => ['gone.txt'],
          content: async () => {
            throw new DmError('VERSION_NOT_FOUND', 'gone', { category: 'not-found' });
          },
        }),
      ),
      /gone/,
    );
    // Failed builds are not kept: asked again, it is built again.
    const again = await cache.get('sha256:broken2', 'r', sourceOf(new Map([['ok.txt', Buffer.from('ok')]])));
    assert.ok(again.length > 0);
    assert.ok(cache.admission.idle);
  });
});
