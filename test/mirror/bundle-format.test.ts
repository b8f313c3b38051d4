/**
 * Bundle files: a round trip keeps every byte and digest; every kind of tampering (a flipped byte
 * in a blob, in the compressed stream or in the manifest, a truncated archive, an extra or a
 * missing file, a wrong or missing signature) is refused with a sentence naming the problem.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Header } from 'tar';
import { DmError } from '../../client/src/error.js';
import { versionDigest } from '../../client/src/registry/digest.js';
import {
  type BundleManifest,
  generateBundleKey,
  readBundle,
  readSigningKey,
  readVerifyKey,
  writeBundle,
} from '../../server/src/mirror/bundle-format.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-bundle-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function sample(): { content: Omit<BundleManifest, 'digest' | 'format'>; blobs: Map<string, Buffer> } {
  const files = [
    { path: 'redis.jinja', content: Buffer.from('kind: Redis\n') },
    { path: 'redis.jinja.schema', content: Buffer.from('info:\n  title: Redis\n') },
    { path: 'example.yaml', content: Buffer.from('resources: []\n') },
  ];
  const blobs = new Map(files.map((f) => [sha(f.content), f.content]));
  const list = files.map((f) => ({ path: f.path, sha256: sha(f.content), size: f.content.length }));
  return {
    blobs,
    content: {
      createdAt: '2026-11-24T00:00:00.000Z',
      since: null,
      registries: [{ name: 'github.com/o/r', visibility: 'public', source: 'github.com/o/r', commit: 'abc' }],
      templates: [
        {
          registry: 'github.com/o/r',
          collection: '',
          name: 'redis',
          latestVersion: 'v1.0.0',
          title: 'Redis',
          description: null,
        },
      ],
      versions: [
        {
          reference: 'github.com/o/r/redis:=v1.0.0',
          registry: 'github.com/o/r',
          collection: '',
          template: 'redis',
          version: 'v1.0.0',
          kind: 'jinja',
          dir: 'redis/v1.0.0',
          templateFile: 'redis.jinja',
          schemaFile: 'redis.jinja.schema',
          hasExample: true,
          digest: versionDigest(list),
          commit: 'abc',
          firstSeen: '2026-11-01T00:00:00.000Z',
          schemaJson: '{"info":{"title":"Redis"}}',
          files: list,
        },
      ],
      blobs: [...blobs].map(([s, b]) => ({ sha256: s, size: b.length })),
    },
  };
}

async function write(name: string, options: { sign?: boolean } = {}) {
  const { content, blobs } = sample();
  const out = join(dir, name);
  const key = join(dir, `${name}.key`);
  if (options.sign) await generateBundleKey(key);
  const result = await writeBundle(
    out,
    content,
    (s) => blobs.get(s)!,
    options.sign ? { signingKey: await readSigningKey(key) } : {},
  );
  return { out, key, ...result, blobs };
}

/** Rewrites the tar stream inside a bundle (uncompressed) and compresses it again. */
function rewriteTar(file: string, edit: (tar: Buffer) => Buffer): void {
  writeFileSync(file, gzipSync(edit(gunzipSync(readFileSync(file)))));
}

async function refused(file: string, pattern: RegExp, options: Parameters<typeof readBundle>[1] = {}) {
  await assert.rejects(readBundle(file, options), (e: unknown) => {
    assert.ok(e instanceof DmError, String(e));
    assert.match(e.message, pattern);
    assert.ok(!/\n\s+at /.test(e.message), 'no stack trace');
    return true;
  });
}

describe('bundle files', () => {
  it('round-trips manifest and content, signed', async () => {
    const { out, key, manifest, blobs } = await write('round.tgz', { sign: true });
    const read = await readBundle(out, { verifyKey: await readVerifyKey(`${key}.pub`) });
    assert.deepEqual(read.manifest, manifest);
    assert.equal(read.signed, true);
    assert.deepEqual([...read.blobs.keys()].sort(), [...blobs.keys()].sort());
    for (const [s, b] of blobs) assert.ok(read.blobs.get(s)!.equals(b));
    assert.match(manifest.digest, /^sha256:[0-9a-f]{64}$/);
  });

  it('is byte-for-byte deterministic for the same content', async () => {
    const a = await write('det-a.tgz');
    const b = await write('det-b.tgz');
    assert.ok(readFileSync(a.out).equals(readFileSync(b.out)));
  });

  it('refuses a flipped byte in a blob', async () => {
    const { out } = await write('flip-blob.tgz');
    rewriteTar(out, (tar) => {
      const i = tar.indexOf('kind: Redis');
      tar[i] = 'K'.charCodeAt(0);
      return tar;
    });
    await refused(out, /blob [0-9a-f]{64} has sha256 [0-9a-f]{64}: its content was altered/);
  });

  it('refuses a flipped byte in the compressed stream', async () => {
    const { out } = await write('flip-gz.tgz');
    const bytes = readFileSync(out);
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    writeFileSync(out, bytes);
    await refused(out, /truncated or corrupt|altered|not a valid archive|truncated/);
  });

  it('refuses a truncated archive', async () => {
    const { out } = await write('trunc.tgz');
    const bytes = readFileSync(out);
    writeFileSync(out, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    await refused(out, /truncated or corrupt|truncated/);
  });

  it('refuses an altered manifest', async () => {
    const { out } = await write('manifest.tgz');
    rewriteTar(out, (tar) => {
      const i = tar.indexOf('"v1.0.0"');
      tar[i + 2] = '9'.charCodeAt(0);
      return tar;
    });
    await refused(out, /manifest\.json was altered/);
  });

  it('refuses an altered manifest as it arrives, before what follows it is read', async () => {
    const { out } = await write('manifest-first.tgz');
    rewriteTar(out, (tar) => {
      const i = tar.indexOf('"v1.0.0"');
      tar[i + 2] = '9'.charCodeAt(0);
      // Damage after the manifest that the reader would otherwise report.
      return Buffer.concat([tar, Buffer.from('trailing garbage')]);
    });
    await refused(out, /manifest\.json was altered/);
  });

  it('refuses an extra file and a missing blob', async () => {
    const { out } = await write('extra.tgz');
    rewriteTar(out, (tar) => {
      const header = Buffer.alloc(512);
      const content = Buffer.from('x');
      new Header({
        path: `blobs/${sha(content)}`,
        mode: 0o644,
        size: 1,
        mtime: new Date(0),
        type: 'File',
      }).encode(header, 0);
      const body = Buffer.alloc(512);
      content.copy(body);
      return Buffer.concat([tar.subarray(0, tar.length - 1024), header, body, Buffer.alloc(1024)]);
    });
    await refused(out, /blob [0-9a-f]{64} is not listed in the manifest/);

    const missing = await write('missing.tgz');
    rewriteTar(missing.out, (tar) => {
      // Cut the last blob (header + one padded block) off.
      const end = tar.length - 1024;
      return Buffer.concat([tar.subarray(0, end - 1024), Buffer.alloc(1024)]);
    });
    await refused(missing.out, /is listed but missing/);
  });

  it('refuses a wrong signature and an unsigned bundle when a key is asked for', async () => {
    const signed = await write('signed.tgz', { sign: true });
    const other = await write('other.tgz', { sign: true });
    await refused(signed.out, /signature does not verify/, {
      verifyKey: await readVerifyKey(`${other.key}.pub`),
    });
    const unsigned = await write('unsigned.tgz');
    await refused(unsigned.out, /not signed/, { verifyKey: await readVerifyKey(`${signed.key}.pub`) });
  });

  it('names a missing file and a key that is not Ed25519', async () => {
    await refused(join(dir, 'nosuch.tgz'), /no such bundle/);
    const bad = join(dir, 'bad.pem');
    writeFileSync(bad, 'not a key');
    await assert.rejects(readVerifyKey(bad), /is not an Ed25519 public key/);
  });

  it('refuses a first-seen time later than the bundle or not a time', async () => {
    for (const [name, firstSeen, pattern] of [
      ['late.tgz', '2026-11-25T00:00:00.000Z', /firstSeen 2026-11-25T00:00:00.000Z is later than the bundle/],
      ['garbled.tgz', 'yesterday', /firstSeen is not a time/],
    ] as const) {
      const { content, blobs } = sample();
      content.versions[0]!.firstSeen = firstSeen;
      const out = join(dir, name);
      await writeBundle(out, content, (s) => blobs.get(s)!);
      await refused(out, pattern);
    }
    const kept = await write('kept.tgz');
    assert.equal((await readBundle(kept.out)).manifest.versions[0]?.firstSeen, '2026-11-01T00:00:00.000Z');
  });
});

/** A tar entry as writeBundle writes one: header, content, padding to 512 bytes. */
function tarEntry(path: string, content: Buffer, type: 'File' | 'Directory' = 'File'): Buffer {
  const header = Buffer.alloc(512);
  new Header({ path, mode: 0o644, size: content.length, mtime: new Date(0), type }).encode(header, 0);
  return Buffer.concat([header, content, Buffer.alloc((512 - (content.length % 512)) % 512)]);
}

/** The size of the tar entry at `offset` (its header's octal size field). */
const entrySize = (tar: Buffer, offset: number) =>
  Number.parseInt(tar.toString('latin1', offset + 124, offset + 135), 8);

describe('bundle files: the one-pass tar reader', () => {
  it('reads a blob spanning several gunzipped chunks and an empty blob', async () => {
    const { content, blobs } = sample();
    // 3 MiB that do not compress to nothing: the reader's chunks are 1 MiB.
    const big = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < big.length; i += 32) createHash('sha256').update(String(i)).digest().copy(big, i);
    const empty = Buffer.alloc(0);
    const files = [
      { path: 'big.bin', sha256: sha(big), size: big.length },
      { path: 'empty.txt', sha256: sha(empty), size: 0 },
    ];
    blobs.set(sha(big), big);
    blobs.set(sha(empty), empty);
    content.versions[0]!.files.push(...files);
    content.versions[0]!.digest = versionDigest(content.versions[0]!.files);
    content.blobs.push(...files.map((f) => ({ sha256: f.sha256, size: f.size })));
    const out = join(dir, 'big.tgz');
    await writeBundle(out, content, (s) => blobs.get(s)!);
    const read = await readBundle(out);
    assert.ok(read.blobs.get(sha(big))!.equals(big));
    assert.equal(read.blobs.get(sha(empty))!.length, 0);
    assert.equal(
      read.contentBytes,
      [...blobs.values()].reduce((n, b) => n + b.length, 0),
    );
    await refused(out, /big\.bin|is \d+ bytes, more than 1048576/, { maxBlobBytes: 1024 * 1024 });
  });

  it('refuses an entry header with a wrong checksum', async () => {
    const { out } = await write('checksum.tgz');
    rewriteTar(out, (tar) => {
      const second = 512 + Math.ceil(entrySize(tar, 0) / 512) * 512;
      tar[second + 136] = '7'.charCodeAt(0); // its mtime, outside the checksum's own field
      return tar;
    });
    await refused(out, /not a valid archive \(an entry header has a wrong checksum\)/);
  });

  it('refuses an entry that is not a file', async () => {
    const { out } = await write('directory.tgz');
    rewriteTar(out, (tar) => Buffer.concat([tarEntry('blobs/', Buffer.alloc(0), 'Directory'), tar]));
    await refused(out, /unexpected Directory entry blobs\//);
  });

  it('refuses an archive cut inside an entry, one without its end marker, and data after it', async () => {
    const cut = await write('cut.tgz');
    // Valid gzip around a tar cut in the middle of the manifest.
    rewriteTar(cut.out, (tar) => tar.subarray(0, 512 + Math.floor(entrySize(tar, 0) / 2)));
    await refused(cut.out, /the archive is truncated$/);

    const unmarked = await write('unmarked.tgz');
    rewriteTar(unmarked.out, (tar) => tar.subarray(0, tar.length - 1024));
    await refused(unmarked.out, /the archive is truncated \(it has no end-of-archive marker\)/);

    const trailing = await write('trailing.tgz');
    rewriteTar(trailing.out, (tar) => Buffer.concat([tar, Buffer.alloc(512), Buffer.from('more')]));
    await refused(trailing.out, /data after its end-of-archive marker/);

    // Zeros after the marker (a tar padded to its record size) are fine.
    const padded = await write('padded.tgz');
    rewriteTar(padded.out, (tar) => Buffer.concat([tar, Buffer.alloc(10240 - (tar.length % 10240))]));
    assert.equal((await readBundle(padded.out)).manifest.versions.length, 1);

    const lone = await write('lone.tgz');
    rewriteTar(lone.out, (tar) => {
      const second = 512 + Math.ceil(entrySize(tar, 0) / 512) * 512;
      return Buffer.concat([tar.subarray(0, second), Buffer.alloc(512), tar.subarray(second)]);
    });
    await refused(lone.out, /not a valid archive \(an entry after a zero block\)/);
  });

  it('checks the digest of a manifest laid out otherwise by its content', async () => {
    const relaid = async (name: string, edit: (m: BundleManifest) => void) => {
      const { out } = await write(name);
      rewriteTar(out, (tar) => {
        const size = entrySize(tar, 0);
        const manifest = JSON.parse(tar.subarray(512, 512 + size).toString('utf8')) as BundleManifest;
        edit(manifest);
        const rest = tar.subarray(512 + Math.ceil(size / 512) * 512);
        return Buffer.concat([
          tarEntry('manifest.json', Buffer.from(JSON.stringify(manifest, null, 2))),
          rest,
        ]);
      });
      return out;
    };
    const same = await relaid('relaid.tgz', () => {});
    assert.equal((await readBundle(same)).manifest.versions.length, 1);
    const altered = await relaid('relaid-altered.tgz', (m) => {
      m.createdAt = '2026-11-25T00:00:00.000Z';
    });
    await refused(altered, /manifest\.json was altered/);
  });
});
