import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../error.js';
import { digestVersion, sha256Hex, versionDigest } from './digest.js';
import { createDirectoryReader, readDirectoryTree } from './read-directory-tree.js';
import { scanRegistryTree } from './scan-tree.js';

// Computed independently (Python hashlib) from the definition in docs/registry-layout.md "Digests".
const FILES = {
  'redis.jinja': 'resources: []\n',
  'example.yaml': 'resources:\n- name: a\n  type: redis.jinja\n',
  'helpers/common.jinja': '',
};
const FILE_SHA256 = {
  'redis.jinja': '6c71762bddd54c97932b035aedf43fd9d460da4df3c19a294dc46e1b356f781d',
  'example.yaml': '4e4aa52af5b99f09e93772e6bdfd0a027c599d24b16fc003dfa5bb7e8a91a3d0',
  'helpers/common.jinja': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
};
const VERSION_DIGEST = 'sha256:f8993937744b8db1aa9cbaa6c2a98cc6a2f3b89a2c80ae71ae8110c68ed22e0c';

describe('sha256Hex()', () => {
  it('matches the known vectors', () => {
    assert.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(sha256Hex(Buffer.from('abc')), sha256Hex('abc'));
    for (const [path, content] of Object.entries(FILES)) {
      assert.equal(sha256Hex(content), FILE_SHA256[path as keyof typeof FILE_SHA256]);
    }
  });
});

describe('versionDigest()', () => {
  const files = Object.entries(FILE_SHA256).map(([path, sha256]) => ({ path, sha256 }));
  it('is sha256 over the sorted lines path\\0sha256\\n', () => {
    assert.equal(versionDigest(files), VERSION_DIGEST);
    assert.equal(versionDigest([]), `sha256:${sha256Hex('')}`);
  });
  it('does not depend on the order of the files', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray(files, { minLength: 3, maxLength: 3 }), (shuffled) => {
        assert.equal(versionDigest(shuffled), VERSION_DIGEST);
      }),
    );
  });
  it('changes with any path or content', () => {
    const renamed = files.map((f) => (f.path === 'redis.jinja' ? { ...f, path: 'redis2.jinja' } : f));
    assert.notEqual(versionDigest(renamed), VERSION_DIGEST);
    const edited = files.map((f) => (f.path === 'redis.jinja' ? { ...f, sha256: sha256Hex('x') } : f));
    assert.notEqual(versionDigest(edited), VERSION_DIGEST);
  });
  it('rejects a file listed twice and a malformed sha256', () => {
    assert.throws(
      () => versionDigest([...files, files[0]!]),
      (e: unknown) => e instanceof DmError && /twice/.test(e.message),
    );
    assert.throws(() => versionDigest([{ path: 'a', sha256: 'ABC' }]), /64 lowercase hex/);
  });
});

describe('readDirectoryTree() + digestVersion()', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dm-digest-'));
    for (const [path, content] of Object.entries(FILES)) {
      await mkdir(join(dir, 'redis/v1', path, '..'), { recursive: true });
      await writeFile(join(dir, 'redis/v1', path), content);
    }
    await mkdir(join(dir, '.git/objects'), { recursive: true });
    await writeFile(join(dir, '.git/HEAD'), 'ref: refs/heads/main\n');
    await writeFile(join(dir, 'registry.yaml'), 'collections: {}\n');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads every file and directory except .git, and registry.yaml', async () => {
    const tree = await readDirectoryTree(dir);
    assert.deepEqual(
      tree.entries.map((e) => `${e.type} ${e.path}`),
      [
        'tree redis',
        'tree redis/v1',
        'blob redis/v1/example.yaml',
        'tree redis/v1/helpers',
        'blob redis/v1/helpers/common.jinja',
        'blob redis/v1/redis.jinja',
        'blob registry.yaml',
      ],
    );
    assert.equal(tree.registryYaml, 'collections: {}\n');
  });

  it('gives the same version digest as the definition, from disk', async () => {
    const tree = await readDirectoryTree(dir);
    const scan = scanRegistryTree(tree.entries, { registryYaml: tree.registryYaml });
    const digest = await digestVersion(scan.versions[0]!, createDirectoryReader(dir));
    assert.equal(digest.digest, VERSION_DIGEST);
    assert.deepEqual(
      digest.files.map((f) => [f.path, f.sha256, f.size]),
      [
        ['example.yaml', FILE_SHA256['example.yaml'], FILES['example.yaml'].length],
        ['helpers/common.jinja', FILE_SHA256['helpers/common.jinja'], 0],
        ['redis.jinja', FILE_SHA256['redis.jinja'], FILES['redis.jinja'].length],
      ],
    );
  });

  it('gives the same digest whatever the source: only content counts', async () => {
    const contents = new Map(Object.entries(FILES).map(([p, c]) => [`x/redis/v9/${p}`, Buffer.from(c)]));
    const scan = scanRegistryTree(
      [...contents.keys()].map((path) => ({ path, type: 'blob' as const, gitSha: 'f'.repeat(40) })),
    );
    const digest = await digestVersion(scan.versions[0]!, (p) => contents.get(p)!);
    assert.equal(digest.digest, VERSION_DIGEST);
  });

  it('reads a symbolic link as its target, as git stores it, never following it', async () => {
    const linkDir = await mkdtemp(join(tmpdir(), 'dm-link-'));
    try {
      await mkdir(join(linkDir, 't/v1'), { recursive: true });
      await writeFile(join(linkDir, 't/v1/t.jinja'), 'resources: []\n');
      await symlink('/etc/hostname', join(linkDir, 't/v1/outside'));
      const tree = await readDirectoryTree(linkDir);
      assert.ok(tree.entries.some((e) => e.path === 't/v1/outside' && e.type === 'blob'));
      const read = createDirectoryReader(linkDir);
      assert.equal(Buffer.from(await read('t/v1/outside')).toString(), '/etc/hostname');
    } finally {
      await rm(linkDir, { recursive: true, force: true });
    }
  });

  it('refuses paths that leave the registry, and names missing files and directories', async () => {
    const read = createDirectoryReader(dir);
    await assert.rejects(async () => read('../etc/passwd'), /not a path inside the registry/);
    await assert.rejects(async () => read('/etc/passwd'), /not a path inside the registry/);
    await assert.rejects(
      async () => read('redis/v1/nope.jinja'),
      (e: unknown) => e instanceof DmError && e.category === 'not-found',
    );
    await assert.rejects(
      readDirectoryTree(join(dir, 'missing')),
      (e: unknown) =>
        e instanceof DmError && e.code === 'REGISTRY_DIR_NOT_FOUND' && e.message.includes('missing'),
    );
    await assert.rejects(
      readDirectoryTree(join(dir, 'registry.yaml')),
      (e: unknown) => e instanceof DmError && e.code === 'NOT_A_DIRECTORY',
    );
  });
});
