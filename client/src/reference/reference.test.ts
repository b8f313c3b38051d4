import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../error.js';
import {
  formatReference,
  parseDefaultRegistry,
  parseReference,
  type RegistryReference,
} from './reference.js';

function registry(text: string, defaultRegistry?: string): RegistryReference {
  const ref = parseReference(text, { defaultRegistry });
  assert.equal(ref.kind, 'registry');
  return ref as RegistryReference;
}

function invalid(text: string, pattern: RegExp, defaultRegistry?: string): void {
  assert.throws(
    () => parseReference(text, { defaultRegistry }),
    (e: unknown) => e instanceof DmError && pattern.test(e.message),
    `expected ${text} to be rejected with ${pattern}`,
  );
}

describe('parseReference()', () => {
  it('parses a full reference with a collection', () => {
    const r = registry('github.com/acme/templates/big-data/spark:v2.1');
    assert.deepEqual(
      [r.host, r.owner, r.repo, r.collection, r.template, r.version?.version.raw, r.version?.exact],
      ['github.com', 'acme', 'templates', 'big-data', 'spark', 'v2.1', false],
    );
  });
  it('parses the root collection and dotted collection names', () => {
    assert.equal(registry('github.com/acme/templates/redis:v1').collection, '');
    assert.equal(
      registry('github.com/acme/templates/org.example.obs/prometheus:v1').collection,
      'org.example.obs',
    );
  });
  it('parses exact pins', () => {
    const r = registry('github.com/acme/templates/redis:=v1.1.2');
    assert.equal(r.version?.exact, true);
    assert.equal(formatReference(r), 'github.com/acme/templates/redis:=v1.1.2');
  });
  it('resolves short forms against the default registry', () => {
    assert.equal(
      formatReference(registry('redis:v1', 'acme/templates')),
      'github.com/acme/templates/redis:v1',
    );
    assert.equal(
      formatReference(registry('redis:v1', 'acme/templates/db')),
      'github.com/acme/templates/db/redis:v1',
    );
    assert.equal(
      formatReference(registry('cache/redis:v1', 'acme/templates/db')),
      'github.com/acme/templates/cache/redis:v1',
    );
    assert.equal(
      formatReference(registry('dot.delimited.names/redis:v1', 'ghe.example.com/acme/templates')),
      'ghe.example.com/acme/templates/dot.delimited.names/redis:v1',
    );
  });
  it('says a short reference needs a default registry', () => {
    assert.throws(
      () => parseReference('redis:v1'),
      (e: unknown) => e instanceof DmError && e.code === 'MISSING_DEFAULT_REGISTRY',
    );
  });
  it('allows a missing version only when asked', () => {
    invalid('github.com/acme/t/redis', /version is missing/);
    const r = parseReference('github.com/acme/t/redis', { allowMissingVersion: true }) as RegistryReference;
    assert.equal(r.version, undefined);
    assert.equal(formatReference(r), 'github.com/acme/t/redis');
  });
  it('rejects more than one collection segment, saying so', () => {
    invalid('github.com/o/r/a/b/c:v1', /only one collection segment/);
    invalid('a/b/c:v1', /not a host/, 'o/r');
  });
  it('rejects malformed parts naming them', () => {
    invalid('github.com/o/r/re dis:v1', /whitespace/);
    invalid('github.com/o/r/_redis:v1', /template '_redis'/);
    invalid('github.com/o/r/redis:1.0', /start with 'v'/);
    invalid('github.com/o/r/redis:v01', /leading zero/);
    invalid('github.com/o/r//redis:v1', /empty path segment/);
    invalid('github.com/o/redis:v1', /needs <owner>\/<repo>/);
    invalid('github.com/-o/r/redis:v1', /owner '-o'/);
    invalid('', /empty/);
  });
  it('parses plain URLs', () => {
    const r = parseReference('https://raw.githubusercontent.com/o/r/main/redis/v1/redis.jinja');
    assert.deepEqual(r, {
      kind: 'url',
      url: 'https://raw.githubusercontent.com/o/r/main/redis/v1/redis.jinja',
    });
    invalid('https://example.com/', /must name a template file/);
    invalid('https://user:pw@example.com/x.jinja', /credentials/);
  });
  it('parseDefaultRegistry() reads owner/repo[/collection] with an optional host', () => {
    assert.deepEqual(parseDefaultRegistry('acme/templates'), {
      host: 'github.com',
      owner: 'acme',
      repo: 'templates',
      collection: '',
    });
    assert.equal(parseDefaultRegistry('ghe.example.com/acme/templates/db').collection, 'db');
    assert.throws(() => parseDefaultRegistry('acme'), /not a registry/);
  });

  const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,12}$/);
  const owner = fc.stringMatching(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,8}[A-Za-z0-9])?$/);
  const repo = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,10}$/);
  const host = fc.constantFrom('github.com', 'ghe.example.com', 'mirror.internal:8443');
  const version = fc
    .tuple(
      fc.nat(20),
      fc.option(fc.nat(20)),
      fc.option(fc.nat(20)),
      fc.option(fc.constantFrom('rc.1', 'beta', 'x-1.2')),
      fc.boolean(),
    )
    .map(([a, b, c, pre, exact]) => {
      let v = `v${a}`;
      if (b !== null) v += `.${b}`;
      if (b !== null && c !== null) v += `.${c}`;
      if (pre !== null) v += `-${pre}`;
      return `${exact ? '=' : ''}${v}`;
    });
  const fullReference = fc
    .tuple(host, owner, repo, fc.option(name), name, version)
    .map(([h, o, r, c, t, v]) => `${h}/${o}/${r}/${c === null ? '' : `${c}/`}${t}:${v}`);

  it('format(parse(s)) round-trips every full reference (property)', () => {
    fc.assert(
      fc.property(fullReference, (s) => {
        assert.equal(formatReference(parseReference(s)), s);
      }),
      { numRuns: 3000 },
    );
  });
  it('short references format to a full reference that parses back to itself (property)', () => {
    fc.assert(
      fc.property(fc.option(name), name, version, (c, t, v) => {
        const canonical = formatReference(
          parseReference(`${c === null ? '' : `${c}/`}${t}:${v}`, { defaultRegistry: 'acme/templates' }),
        );
        assert.equal(formatReference(parseReference(canonical)), canonical);
      }),
    );
  });
  it('never throws anything but DmError on arbitrary strings (property)', () => {
    const pieces = fc.constantFrom(
      'github.com',
      '/',
      ':',
      '=',
      'v1',
      '.',
      '..',
      'a',
      'https://',
      '-',
      ' ',
      '%',
      '\u0000',
      '__proto__',
    );
    const arbitrary = fc.oneof(
      fc.string(),
      fc.array(pieces, { maxLength: 12 }).map((p) => p.join('')),
    );
    fc.assert(
      fc.property(arbitrary, fc.boolean(), (s, withDefault) => {
        try {
          parseReference(s, {
            defaultRegistry: withDefault ? 'acme/templates' : undefined,
            allowMissingVersion: withDefault,
          });
        } catch (e) {
          assert.ok(e instanceof DmError, `threw ${String(e)} for ${JSON.stringify(s)}`);
        }
      }),
      { numRuns: 5000 },
    );
  });
});
