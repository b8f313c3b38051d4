/**
 * A mirror's (and a bundle import's) own first-seen record (docs/integrity-store.md §6): versions
 * added without a swap are recorded and logged; a version that comes back with another digest
 * than the one first seen here is quarantined and not added, even after its registry was deleted.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { versionDigest } from '../../client/src/registry/digest.js';
import { type AddedVersion, addVersions } from '../../server/src/store/add-versions.js';
import { openStore } from '../../server/src/store/db.js';
import { readsOf } from '../../server/src/store/reads.js';
import { tempDir } from '../server/helpers.js';

const REGISTRY = {
  name: 'github.com/acme/templates',
  sourceType: 'upstream' as const,
  source: 'https://upstream.example/github.com/acme/templates',
  visibility: 'public' as const,
  commit: null,
};

function version(text: string): { v: AddedVersion; content: Map<string, Buffer> } {
  const bytes = Buffer.from(text);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const files = [{ path: 'redis.jinja', sha256, size: bytes.length }];
  return {
    v: {
      collection: '',
      template: 'redis',
      version: 'v1.0.3',
      kind: 'jinja',
      dir: 'redis/v1.0.3',
      templateFile: 'redis.jinja',
      schemaFile: null,
      hasExample: false,
      digest: versionDigest(files),
      schemaJson: null,
      files,
    },
    content: new Map([[sha256, bytes]]),
  };
}

describe("a mirror's first-seen record", () => {
  it('addVersions() records first sights and quarantines a version that returns changed', async () => {
    const dir = tempDir();
    const store = openStore(join(dir, 'mirror.db'));
    try {
      const first = version('resources: []\n');
      const added = addVersions(store, REGISTRY, [first.v], (sha) => first.content.get(sha), { now: 1 });
      assert.equal(added.added, 1);
      const reads = readsOf(store);
      assert.equal((await reads.newestRecord(`${REGISTRY.name}/redis`, 'v1.0.3'))?.digest, first.v.digest);
      assert.equal(store.sqlite.prepare('SELECT size FROM log_state').pluck().get(), 1);

      // The registry is deleted (the log never forgets), then the version comes back changed.
      store.sqlite.prepare('DELETE FROM registries').run();
      const changed = version('resources: [changed]\n');
      const again = addVersions(store, REGISTRY, [changed.v], (sha) => changed.content.get(sha), { now: 2 });
      assert.equal(again.added, 0);
      const open = await reads.openQuarantines(again.registryId);
      assert.deepEqual(
        open.map((q) => [q.template, q.version, q.firstDigest, q.newDigest]),
        [[`${REGISTRY.name}/redis`, 'v1.0.3', first.v.digest, changed.v.digest]],
      );
      assert.equal(store.sqlite.prepare('SELECT count(*) FROM versions').pluck().get(), 0);
      assert.equal(store.sqlite.prepare('SELECT size FROM log_state').pluck().get(), 1);
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
