/**
 * A mirror's (and a bundle import's) own first-seen record (docs/integrity-store.md §6): versions
 * added without a swap are recorded and logged; a version that comes back with another digest
 * than the one first seen here is quarantined and not added, even after its registry was deleted.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { versionDigest } from '../../client/src/registry/digest.js';
import type { AddedVersion } from '../../server/src/store/contract.js';
import { DIALECTS, type DialectTestServer, testServerOn } from '../server/helpers.js';

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

async function one(server: DialectTestServer, sql: string): Promise<number> {
  const store = server.store;
  if ('pool' in store) return Number(Object.values((await store.pool.query(sql)).rows[0])[0]);
  return Number(store.sqlite.prepare(sql).pluck().get());
}

for (const dialect of DIALECTS) {
  describe(`a mirror's first-seen record on ${dialect}`, () => {
    it('addVersions() records first sights (at their time from elsewhere) and quarantines a version that returns changed', async () => {
      const server = await testServerOn(dialect);
      try {
        const { mirror, reads, registries } = server.service.data;
        const first = version('resources: []\n');
        const added = await mirror.addVersions(
          [{ registry: REGISTRY, versions: [{ ...first.v, seenAt: 500 }] }],
          (sha) => first.content.get(sha),
          { now: 1000 },
        );
        assert.equal(added.added, 1);
        assert.deepEqual(added.quarantined, []);
        assert.equal((await reads.newestRecord(`${REGISTRY.name}/redis`, 'v1.0.3'))?.digest, first.v.digest);
        assert.equal(await one(server, 'SELECT size FROM log_state'), 1);
        assert.equal(await one(server, 'SELECT seen_at FROM first_seen'), 500);
        assert.equal(
          (
            await mirror.bundleVersion(
              { registry: REGISTRY.name, collection: '', template: 'redis', version: 'v1.0.3' },
              first.v.digest,
            )
          )?.firstSeen,
          500,
        );

        // The registry is deleted (the log never forgets), then the version comes back changed.
        await registries.delete(added.registryId);
        const changed = version('resources: [changed]\n');
        const again = await mirror.addVersions(
          [{ registry: REGISTRY, versions: [changed.v] }],
          (sha) => changed.content.get(sha),
          { now: 2000 },
        );
        assert.equal(again.added, 0);
        assert.deepEqual(
          again.quarantined.map((q) => [q.template, q.version, q.firstDigest, q.newDigest]),
          [[`${REGISTRY.name}/redis`, 'v1.0.3', first.v.digest, changed.v.digest]],
        );
        const open = await reads.openQuarantines(again.registryId);
        assert.deepEqual(
          open.map((q) => [q.template, q.version, q.firstDigest, q.newDigest]),
          [[`${REGISTRY.name}/redis`, 'v1.0.3', first.v.digest, changed.v.digest]],
        );
        assert.equal(await one(server, 'SELECT count(*) FROM versions'), 0);
        assert.equal(await one(server, 'SELECT size FROM log_state'), 1);
        // The same disagreement again is not a new event.
        const third = await mirror.addVersions([{ registry: REGISTRY, versions: [changed.v] }], (sha) =>
          changed.content.get(sha),
        );
        assert.deepEqual(third.quarantined, []);
      } finally {
        await server.close();
      }
    });

    it('addVersions() refuses a version stored with another digest and writes nothing', async () => {
      const server = await testServerOn(dialect);
      try {
        const { mirror } = server.service.data;
        const first = version('a: 1\n');
        await mirror.addVersions([{ registry: REGISTRY, versions: [first.v] }], (sha) =>
          first.content.get(sha),
        );
        const other = version('a: 2\n');
        const files = await one(server, 'SELECT count(*) FROM files');
        await assert.rejects(
          mirror.addVersions([{ registry: REGISTRY, versions: [other.v] }], (sha) => other.content.get(sha)),
          /VERSION_CONFLICT|is stored with digest .* and would become/,
        );
        assert.equal(await one(server, 'SELECT count(*) FROM files'), files);
      } finally {
        await server.close();
      }
    });
  });
}
