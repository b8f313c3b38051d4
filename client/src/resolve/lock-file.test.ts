import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../error.js';
import { versionDigest } from '../registry/digest.js';
import { formatLockFile, type LockEntry, type LockFile, parseLockFile } from './lock-file.js';

const hex = fc.stringMatching(/^[0-9a-f]{64}$/).map((h) => `sha256:${h}`);
// The version digest is over the files listed (verified on reading), so it is computed, not drawn.
const entry: fc.Arbitrary<LockEntry> = fc
  .record({
    template: fc.constantFrom('github.com/o/r/redis', 'github.com/o/r/db/postgres'),
    version: fc.constantFrom('v1.0.3', 'v2.0.0-rc.1'),
    commit: fc.stringMatching(/^[0-9a-f]{40}$/),
    kind: fc.constantFrom('jinja' as const, 'python' as const, 'blueprint' as const),
    templateFile: fc.constantFrom('redis.jinja', 'postgres.py'),
    digest: hex,
    files: fc.dictionary(
      fc.stringMatching(/^[a-z][a-z0-9_/.-]{0,20}$/),
      fc.record({ sha256: fc.stringMatching(/^[0-9a-f]{64}$/), size: fc.nat(1_000_000) }),
      { maxKeys: 6 },
    ),
  })
  .map((e) => ({
    ...e,
    digest: versionDigest(Object.entries(e.files).map(([path, f]) => ({ path, sha256: f.sha256 }))),
  }));
const lockFile: fc.Arbitrary<LockFile> = fc
  .dictionary(fc.stringMatching(/^github\.com\/o\/r\/[a-z]{1,8}:v[0-9]$/), entry, { maxKeys: 8 })
  .map((references) => ({ lockfileVersion: 1, references }));

function reorder(lock: LockFile): LockFile {
  const references: Record<string, LockEntry> = {};
  for (const key of Object.keys(lock.references).reverse()) {
    const e = lock.references[key]!;
    const files: LockEntry['files'] = {};
    for (const p of Object.keys(e.files).reverse()) files[p] = e.files[p]!;
    references[key] = { ...e, files };
  }
  return { lockfileVersion: 1, references };
}

describe('lock file', () => {
  it('is byte-identical for the same resolutions in any order (property)', () => {
    fc.assert(
      fc.property(lockFile, (lock) => {
        assert.equal(formatLockFile(reorder(lock)), formatLockFile(lock));
      }),
    );
  });
  it('round-trips through its text (property)', () => {
    fc.assert(
      fc.property(lockFile, (lock) => {
        const text = formatLockFile(lock);
        assert.equal(formatLockFile(parseLockFile(text)), text);
        assert.deepEqual(parseLockFile(text), parseLockFile(formatLockFile(parseLockFile(text))));
      }),
    );
  });
  it('reads its own format without the YAML parser exactly as the YAML parser does (property)', async () => {
    const { parseYaml } = await import('../document/yaml.js');
    fc.assert(
      fc.property(lockFile, (lock) => {
        const text = formatLockFile(lock);
        const viaYaml = parseLockFile(`# hand-edited\n${text.replace(/^# .*\n/, '')}\n\n`);
        assert.deepEqual(parseLockFile(text), viaYaml);
        assert.deepEqual(parseYaml(text), JSON.parse(JSON.stringify(parseLockFile(text))));
      }),
    );
  });
  it('falls back to YAML for a hand-edited lock file', () => {
    const digest = versionDigest([{ path: 'redis.jinja', sha256: 'b'.repeat(64) }]);
    const text =
      'lockfileVersion: 1\nreferences:\n  "github.com/o/r/redis:v1":\n    template: github.com/o/r/redis\n    version: v1.0.3\n    commit: ""\n    kind: jinja\n    templateFile: redis.jinja\n    digest: "' +
      digest +
      '"\n    files:\n      redis.jinja:\n        sha256: ' +
      'b'.repeat(64) +
      '\n        size: 3\n';
    assert.equal(parseLockFile(text).references['github.com/o/r/redis:v1']?.files['redis.jinja']?.size, 3);
  });
  it('rejects a malformed entry naming the property path', () => {
    const text = `lockfileVersion: 1\nreferences:\n  github.com/o/r/redis:v1:\n    template: github.com/o/r/redis\n    version: v1.0.3\n    commit: abc\n    kind: jinja\n    templateFile: redis.jinja\n    digest: md5:1\n    files: {}\n`;
    assert.throws(
      () => parseLockFile(text, '/p/dm.lock'),
      (e: unknown) =>
        e instanceof DmError &&
        e.code === 'INVALID_LOCKFILE' &&
        e.message.includes('/p/dm.lock') &&
        e.message.includes('references["github.com/o/r/redis:v1"].digest'),
    );
    assert.throws(() => parseLockFile('lockfileVersion: 9\n'), /this dm reads version 1/);
  });
  it('rejects a version digest that does not match the files listed under it', () => {
    const text = formatLockFile({
      lockfileVersion: 1,
      references: {
        'github.com/o/r/redis:v1': {
          template: 'github.com/o/r/redis',
          version: 'v1.0.3',
          commit: '',
          kind: 'jinja',
          templateFile: 'redis.jinja',
          digest: `sha256:${'a'.repeat(64)}`,
          files: { 'redis.jinja': { sha256: 'b'.repeat(64), size: 3 } },
        },
      },
    });
    assert.throws(
      () => parseLockFile(text, '/p/dm.lock'),
      (e: unknown) =>
        e instanceof DmError && e.code === 'INVALID_LOCKFILE' && /does not match the files/.test(e.message),
    );
  });
});
