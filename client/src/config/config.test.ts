import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DmError } from '../error.js';
import { loadConfig } from './config.js';
import { parsePropertyAssignments } from './properties.js';

describe('loadConfig()', () => {
  const file = 'registry: file/repo\nregistryUrl: http://file\noutput: yaml\n';
  it('takes flags over environment over file over defaults', () => {
    const read = () => file;
    const env = { DM_REGISTRY: 'env/repo', HOME: '/home/u' };
    assert.equal(loadConfig({ flags: { registry: 'flag/repo' }, env, readFile: read }).registry, 'flag/repo');
    assert.equal(loadConfig({ env, readFile: read }).registry, 'env/repo');
    assert.equal(loadConfig({ env: { HOME: '/home/u' }, readFile: read }).registry, 'file/repo');
    assert.equal(loadConfig({ env: { HOME: '/home/u' }, readFile: () => undefined }).registry, undefined);
    assert.equal(loadConfig({ env: { HOME: '/home/u' }, readFile: read }).output, 'yaml');
    assert.equal(loadConfig({ flags: { output: 'json' }, env: {}, readFile: read }).output, 'json');
  });
  it('uses XDG directories', () => {
    const c = loadConfig({
      env: { HOME: '/h', XDG_CACHE_HOME: '/c', XDG_CONFIG_HOME: '/cfg' },
      readFile: () => undefined,
    });
    assert.deepEqual(c.dirs, { config: '/cfg/dm', cache: '/c/dm', state: '/h/.local/state/dm' });
    assert.equal(c.configFile, '/cfg/dm/config.yaml');
  });
  it('rejects unknown keys and bad output formats with the file named', () => {
    assert.throws(
      () => loadConfig({ env: { DM_CONFIG: '/x.yaml' }, readFile: () => 'colour: red\n' }),
      (e: unknown) =>
        e instanceof DmError && e.code === 'INVALID_CONFIG_FILE' && e.message.includes('/x.yaml'),
    );
    assert.throws(
      () => loadConfig({ flags: { output: 'xml' }, env: {}, readFile: () => undefined }),
      DmError,
    );
  });
});

describe('parsePropertyAssignments()', () => {
  it('reads values as YAML scalars and nests dotted keys', () => {
    assert.deepEqual(
      parsePropertyAssignments(['replicas=3,debug=true', "tag='3'", 'db.port=5432,db.host=x']),
      {
        replicas: 3,
        debug: true,
        tag: '3',
        db: { port: 5432, host: 'x' },
      },
    );
  });
  it('keeps commas inside brackets', () => {
    assert.deepEqual(parsePropertyAssignments(['ports=[80,443]']), { ports: [80, 443] });
  });
  it('rejects assignments without = and reserved names', () => {
    assert.throws(() => parsePropertyAssignments(['novalue']), /not of the form key=value/);
    assert.throws(() => parsePropertyAssignments(['__proto__.x=1']), /reserved/);
  });
});
