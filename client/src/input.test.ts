import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDmError } from './error.js';
import { loadInput, looksLikeReference, referenceMissingV } from './input.js';

describe('loadInput()', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dm-input-'));
  mkdirSync(join(dir, 'site'));
  writeFileSync(join(dir, 'config.yaml'), 'resources: []\n');
  writeFileSync(join(dir, 'web.jinja'), 'resources: []\n');

  it('tells directories, templates, files and references apart', () => {
    const kinds = ['site', 'config.yaml', 'web.jinja'].map((f) => loadInput(join(dir, f)).kind);
    assert.deepEqual(kinds, ['directory', 'file', 'template']);
    assert.equal(loadInput('github.com/acme/t/redis:v1.0').kind, 'reference');
    assert.equal(loadInput('https://example.test/redis.jinja').kind, 'reference');
  });

  it('builds the one-resource configuration of a template and of a reference', () => {
    const t = loadInput(join(dir, 'web.jinja'), { deployment: 'prod' });
    assert.equal(t.configuration!.content, 'resources:\n- name: "prod"\n  type: "web.jinja"\n');
    assert.equal(t.configuration!.path, join(dir, 'web.jinja'));
    const r = loadInput('acme/t/redis:v1.0', { cwd: dir });
    assert.equal(r.configuration!.content, 'resources:\n- name: "redis"\n  type: "acme/t/redis:v1.0"\n');
    assert.equal(r.configuration!.path, join(dir, 'redis.yaml'));
    assert.equal(r.name, 'redis');
  });

  it('a missing file is FILE_NOT_FOUND, a kind the command does not take a usage error', () => {
    for (const missing of ['nosuch.yaml', './a:v1', 'configs/app.yaml', join(dir, 'nope.jinja')]) {
      assert.throws(
        () => loadInput(missing),
        (e: unknown) => isDmError(e) && e.code === 'FILE_NOT_FOUND' && e.category === 'not-found',
      );
    }
    assert.throws(
      () =>
        loadInput(join(dir, 'config.yaml'), { accept: ['directory', 'reference'], what: 'the blueprint' }),
      (e: unknown) =>
        isDmError(e) &&
        e.category === 'usage' &&
        /is a file; this command takes a directory or a registry reference/.test(e.message),
    );
  });

  it('a path-like argument (./, ../, /, ~) is never a reference (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom('./', '../', '/', '~'), fc.string(), (prefix, rest) => {
        assert.equal(looksLikeReference(prefix + rest), false);
      }),
    );
  });
});

describe('referenceMissingV()', () => {
  it('names the reference meant by a type whose version lacks its v; primitives and references are left alone', () => {
    assert.equal(referenceMissingV('redis:1.0'), 'redis:v1.0');
    assert.equal(
      referenceMissingV('github.com/acme/t/db/redis:=1.2.3'),
      'github.com/acme/t/db/redis:=v1.2.3',
    );
    assert.equal(referenceMissingV('redis:2.0.0-rc.1'), 'redis:v2.0.0-rc.1');
    for (const type of [
      'redis:v1.0',
      'v1/ConfigMap',
      'apps/v1/Deployment',
      'compute.v1.instance',
      'compute.v1:instances',
      'gcp-types/compute-v1:compute.instances',
      'https://example.test/redis.jinja',
      'redis.jinja',
    ]) {
      assert.equal(referenceMissingV(type), undefined, type);
    }
  });

  it('for any name and version, name:<version without v> is name:<version> meant (property)', () => {
    const part = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
    const version = fc
      .tuple(fc.nat(99), fc.option(fc.nat(99), { nil: undefined }), fc.option(fc.nat(99), { nil: undefined }))
      .map(([a, b, c]) => [a, b, c].filter((x) => x !== undefined).join('.'));
    fc.assert(
      fc.property(
        fc.array(part, { minLength: 1, maxLength: 4 }),
        version,
        fc.boolean(),
        (names, v, exact) => {
          const name = names.join('/');
          const eq = exact ? '=' : '';
          assert.equal(referenceMissingV(`${name}:${eq}${v}`), `${name}:${eq}v${v}`);
          assert.equal(referenceMissingV(`${name}:${eq}v${v}`), undefined);
        },
      ),
    );
  });
});
