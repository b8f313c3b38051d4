/**
 * Bundles held to the indexer's rules (issue 25 items 8-10; docs/mirroring.md "Bundles",
 * docs/registry-layout.md "Paths and names"), with the real CLI on each database:
 * - signed bundles whose digests all match but whose names break the one rule every way content
 *   enters is held to (`../` and absolute file paths, a control character in a file name, a
 *   registry named `../../x`, a template directory `..`) are refused whole, naming the problem in
 *   one line, and write nothing;
 * - a bundle may not add versions to a registry indexed from a directory, neither at import nor
 *   after a restart (the directory synced again still serves what the directory holds), unless
 *   the named override `--into-indexed-registries` says so;
 * - without `--verify-key` the import says the signature was not checked (not "verified").
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { versionDigest } from '../../client/src/registry/digest.js';
import { ADMIN_ACCESS } from '../../server/src/api/access.js';
import {
  type BundleManifest,
  type BundleVersion,
  readBundle,
  readSigningKey,
  writeBundle,
} from '../../server/src/mirror/bundle-format.js';
import { serviceOn } from '../server/helpers.js';
import { repoRoot } from '../support/run-cli.js';
import { DIALECTS } from './dialect.js';
import { registryCli } from './registry-cli.js';

const REGISTRY = 'github.com/dm-samples/templates';
const dir = mkdtempSync(join(tmpdir(), 'dm-bundle-rules-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const { registry, ok, database } = registryCli(dir);

const KEY = join(dir, 'bundle.key');
ok(['bundle', 'keygen', '--out', KEY]);

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * A signed bundle holding one version, `change` applied to it (and to the registry's name), every
 * digest computed for what it then says: only the names are wrong.
 */
async function craft(
  name: string,
  change: (v: BundleVersion) => void,
  registryName = 'github.com/acme/hostile',
): Promise<string> {
  const content = Buffer.from('resources: []\n');
  const example = Buffer.from('resources: []\n');
  const v: BundleVersion = {
    reference: `${registryName}/web:=v1.0.0`,
    registry: registryName,
    collection: '',
    template: 'web',
    version: 'v1.0.0',
    kind: 'jinja',
    dir: 'web/v1.0.0',
    templateFile: 'web.jinja',
    schemaFile: null,
    hasExample: true,
    digest: '',
    commit: null,
    firstSeen: null,
    schemaJson: null,
    files: [
      { path: 'web.jinja', sha256: sha(content), size: content.length },
      { path: 'example.yaml', sha256: sha(example), size: example.length },
    ],
  };
  change(v);
  v.digest = versionDigest(v.files);
  const blobs = new Map([
    [sha(content), content],
    [sha(example), example],
  ]);
  const out = join(dir, `${name}.tgz`);
  await writeBundle(
    out,
    {
      createdAt: new Date().toISOString(),
      since: null,
      registries: [{ name: v.registry, visibility: 'public', source: v.registry, commit: null }],
      templates: [],
      versions: [v],
      blobs: [...blobs].map(([s, b]) => ({ sha256: s, size: b.length })),
    },
    (s) => blobs.get(s)!,
    { signingKey: await readSigningKey(KEY) },
  );
  return out;
}

const HOSTILE: [string, (v: BundleVersion) => void, string?][] = [
  [
    'a file path that climbs out',
    (v) => {
      v.files[1]!.path = '../../../../etc/cron.d/pwn';
    },
  ],
  [
    'an absolute file path',
    (v) => {
      v.files[1]!.path = '/abs/file';
    },
  ],
  [
    'a control character in a file name',
    (v) => {
      v.files[1]!.path = 'exa\u001b[31mmple.yaml';
    },
  ],
  [
    'a backslash in a file name',
    (v) => {
      v.files[1]!.path = 'docs\\notes.txt';
    },
  ],
  ['a registry named ../../x', (v) => Object.assign(v, { reference: '../../x/web:=v1.0.0' }), '../../x'],
  [
    'a template named ..',
    (v) => {
      v.template = '..';
      v.reference = 'github.com/acme/hostile/..:=v1.0.0';
      v.dir = '../v1.0.0';
    },
  ],
];

for (const dialect of DIALECTS) {
  describe(`bundles held to the indexer's rules (${dialect})`, () => {
    for (const [name, change, registryName] of HOSTILE) {
      it(`refuses a signed bundle with ${name}, in one line, writing nothing`, async () => {
        const bundle = await craft(name.replace(/\W+/g, '-'), change, registryName);
        const db = await database(dialect);
        ok(['migrate', '--db', db]);
        const r = registry(['bundle', 'import', bundle, '--verify-key', `${KEY}.pub`, '--db', db]);
        assert.equal(r.code, 1, `${r.stdout}${r.stderr}`);
        assert.match(r.stderr, /INVALID_BUNDLE|cannot be imported/);
        assert.match(r.stderr, /cannot be imported: /);
        assert.equal(r.stderr.trim().split('\n').length <= 2, true, r.stderr);
        assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
        assert.ok(!r.stderr.includes('\u001b'), 'no raw control character');
        const { service, close } = await serviceOn(db, dir);
        try {
          assert.deepEqual(await service.all(), [], 'nothing was written');
        } finally {
          await close();
        }
      });
    }

    it('a bundle may not add versions to a directory-indexed registry, also after a restart', async () => {
      const origin = await database(dialect);
      ok(['index', join(repoRoot, 'registry-fixtures'), '--db', origin]);
      const full = join(dir, `full-${dialect}.tgz`);
      ok(['bundle', 'export', '--out', full, '--registry', REGISTRY, '--sign-key', KEY, '--db', origin]);
      // The exported bundle with one more redis version, v9.9.9 (its digests hold).
      const { manifest, blobs } = await readBundle(full);
      const redis = manifest.versions.find((v) => v.reference === `${REGISTRY}/redis:=v1.1`);
      assert.ok(redis);
      const extra: BundleVersion = {
        ...redis,
        reference: `${REGISTRY}/redis:=v9.9.9`,
        version: 'v9.9.9',
        dir: 'redis/v9.9.9',
        firstSeen: null,
      };
      const evil = join(dir, `evil-${dialect}.tgz`);
      const { digest: _digest, format: _format, ...rest } = manifest as BundleManifest;
      await writeBundle(evil, { ...rest, versions: [...manifest.versions, extra] }, (s) => blobs.get(s)!, {
        signingKey: await readSigningKey(KEY),
      });

      const refused = registry(['bundle', 'import', evil, '--verify-key', `${KEY}.pub`, '--db', origin]);
      assert.equal(refused.code, 1, refused.stdout + refused.stderr);
      assert.match(
        refused.stderr,
        new RegExp(`registry ${REGISTRY}, which this server indexes from its directory source`),
      );
      assert.match(refused.stderr, /--into-indexed-registries/);

      // A restart: a new service over the same database syncs the directory again.
      const resolveRedis = async () => {
        const { service, close } = await serviceOn(origin, dir);
        try {
          const row = (await service.all()).find((r) => r.name === REGISTRY)!;
          assert.equal(row.sourceType, 'directory');
          await service.sync(row.id, 'manual');
          return (await service.catalog.resolve(`${REGISTRY}/redis`, ADMIN_ACCESS)).version;
        } finally {
          await close();
        }
      };
      assert.equal(await resolveRedis(), 'v1.1');

      // The named override adds them (the operator asked for it).
      const forced = ok([
        'bundle',
        'import',
        evil,
        '--verify-key',
        `${KEY}.pub`,
        '--into-indexed-registries',
        '--db',
        origin,
      ]);
      assert.match(forced.stdout, /1 versions added/);
    });

    it('without --verify-key, says the signature was not checked', async () => {
      const full = join(dir, `full-${dialect}.tgz`);
      const plain = ok(['bundle', 'import', full, '--db', await database(dialect)]);
      assert.doesNotMatch(plain.stdout, /signature verified/);
      assert.match(plain.stdout, /signature: present but NOT checked \(no --verify-key\)/);
      assert.match(plain.stdout, /checked: every blob's size and sha256/);
      const verified = ok([
        'bundle',
        'import',
        full,
        '--verify-key',
        `${KEY}.pub`,
        '--db',
        await database(dialect),
      ]);
      assert.match(verified.stdout, /signature: verified with .*bundle\.key\.pub/);
    });
  });
}

describe('bundle limits', () => {
  it('a bundle over the size limit names no option that does not exist', async () => {
    const bundle = await craft('limit', () => undefined);
    await assert.rejects(readBundle(bundle, { maxTotalBytes: 10 }), (error: Error) => {
      assert.match(error.message, /larger than 10 bytes/);
      assert.doesNotMatch(error.message, /--max-bytes/);
      return true;
    });
  });
});
