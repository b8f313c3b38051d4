import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../error.js';
import { encodeRecord, type LogRecord, parseRecord, parseRecordKey, recordKey } from './record.js';

const code = (c: string) => (e: unknown) => e instanceof DmError && e.code === c;
const D1 = `sha256:${'a'.repeat(64)}`;
const D2 = `sha256:${'0123456789abcdef'.repeat(4)}`;

const nameArb = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,12}$/);
const recordArb: fc.Arbitrary<LogRecord> = fc.record({
  template: fc
    .tuple(
      fc.constantFrom('github.com', 'ghe.example.com', 'mirror.internal:8443'),
      fc.stringMatching(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,10}[A-Za-z0-9])?$/),
      nameArb.filter((r) => r !== '.' && r !== '..'),
      fc.option(nameArb, { nil: undefined }),
      nameArb,
    )
    .map(
      ([host, owner, repo, collection, t]) =>
        `${host}/${owner}/${repo}/${collection ? `${collection}/` : ''}${t}`,
    ),
  version: fc
    .tuple(fc.nat(40), fc.option(fc.nat(40)), fc.option(fc.nat(40)), fc.constantFrom('', '-rc.1', '+build.7'))
    .map(
      ([a, b, c, tail]) =>
        `v${a}${b === null ? '' : `.${b}`}${b !== null && c !== null ? `.${c}` : ''}${tail}`,
    ),
  digest: fc.constantFrom(D1, D2),
  supersedes: fc.constantFrom(undefined, `sha256:${'f'.repeat(64)}`),
});

describe('log records', () => {
  it('encodeRecord() writes one line: template, version, digest', () => {
    assert.equal(
      encodeRecord({ template: 'github.com/acme/templates/data/redis', version: 'v1.0.3', digest: D1 }),
      `github.com/acme/templates/data/redis v1.0.3 ${D1}\n`,
    );
    assert.equal(
      encodeRecord({
        template: 'github.com/acme/templates/redis',
        version: 'v1',
        digest: D2,
        supersedes: D1,
      }),
      `github.com/acme/templates/redis v1 ${D2} supersedes ${D1}\n`,
    );
  });

  it('parseRecord(encodeRecord(r)) = r and the key round-trips', () => {
    fc.assert(
      fc.property(recordArb, (r) => {
        const text = encodeRecord(r);
        const back = parseRecord(text);
        const { template, version, digest, supersedes } = r;
        assert.deepEqual(back, {
          template,
          version,
          digest,
          ...(supersedes === undefined ? {} : { supersedes }),
        });
        assert.equal(encodeRecord(back), text);
        assert.deepEqual(parseRecord(Buffer.from(text)), back);
        assert.deepEqual(parseRecordKey(recordKey(r)), { template: r.template, version: r.version });
      }),
    );
  });

  it('refuses records that are not canonical, complete and one line', () => {
    const good = { template: 'github.com/acme/templates/redis', version: 'v1.0.3', digest: D1 };
    for (const bad of [
      { ...good, template: 'redis' },
      { ...good, template: 'data/redis' },
      { ...good, template: 'GitHub.com/acme/templates/redis' },
      { ...good, template: 'github.com/acme/templates/a/b/redis' },
      { ...good, template: 'https://example.com/redis.jinja' },
      { ...good, version: '1.0.3' },
      { ...good, version: 'v01' },
      { ...good, version: '~v1.0' },
      { ...good, digest: D1.toUpperCase() },
      { ...good, digest: 'a'.repeat(64) },
      { ...good, supersedes: D1 },
      { ...good, template: 'github.com/acme/templates/re dis' },
    ]) {
      assert.throws(() => encodeRecord(bad), code('CHECKSUM_RECORD_INVALID'), JSON.stringify(bad));
    }
    for (const text of [
      '',
      `github.com/acme/templates/redis v1.0.3 ${D1}`,
      `github.com/acme/templates/redis v1.0.3 ${D1}\n\n`,
      `github.com/acme/templates/redis v1.0.3 ${D1}\nx\n`,
      `github.com/acme/templates/redis  v1.0.3 ${D1}\n`,
      `github.com/acme/templates/redis v1.0.3 ${D1} replaces ${D2}\n`,
      `github.com/acme/templates/redis v1.0.3\n`,
      `${'x'.repeat(3000)}\n`,
    ]) {
      assert.throws(
        () => parseRecord(text),
        code('CHECKSUM_RECORD_INVALID'),
        JSON.stringify(text.slice(0, 80)),
      );
    }
    for (const key of [
      'redis@v1',
      'github.com/acme/templates/redis',
      'github.com/acme/templates/redis@1.0',
      '@v1',
    ]) {
      assert.throws(() => parseRecordKey(key), code('CHECKSUM_RECORD_INVALID'), key);
    }
  });
});
