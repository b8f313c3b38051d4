import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isolatedEnv, runDm } from '../support/run-cli.js';

const FILES: Record<string, string> = {
  '/t/redis/v1/redis.jinja': 'resources:\n- name: {{ env["name"] }}\n  type: Service\n',
  '/t/redis/v1/redis.jinja.schema':
    'imports:\n- path: helpers/common.jinja\nproperties: {port: {type: integer, default: 6379}}\n',
  '/t/redis/v1/helpers/common.jinja': '{% macro x() %}x{% endmacro %}\n',
  '/t/evil/v1/evil.jinja': 'resources: []\n',
  '/t/evil/v1/evil.jinja.schema': 'imports:\n- path: ../../secret\n',
};

describe('plain URL references', () => {
  let server: Server;
  let base: string;
  const seen: string[] = [];
  before(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      const body = FILES[req.url ?? ''];
      res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/plain' });
      res.end(body ?? 'not found');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('locks the template, its schema and the schema imports by digest, then works offline', async () => {
    const env = await isolatedEnv();
    const dir = await mkdtemp(join(tmpdir(), 'dm-url-'));
    const url = `${base}/t/redis/v1/redis.jinja`;
    await writeFile(join(dir, 'config.yaml'), `resources:\n- name: cache\n  type: ${url}\n`);
    const r = await runDm(['install', '-o', 'json'], { env, cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const lock = await readFile(join(dir, 'dm.lock'), 'utf8');
    assert.match(lock, /redis\.jinja\.schema: \{sha256: /);
    assert.match(lock, /helpers\/common\.jinja: \{sha256: /);
    assert.ok(seen.includes('/t/redis/v1/helpers/common.jinja'));
    const offline = await runDm(['install', '--offline'], { env, cwd: dir });
    assert.equal(offline.code, 0, offline.stderr);
    assert.equal(await readFile(join(dir, 'dm.lock'), 'utf8'), lock);
  });

  it('refuses schema imports that escape the template directory', async () => {
    const env = await isolatedEnv();
    const dir = await mkdtemp(join(tmpdir(), 'dm-url-'));
    await writeFile(
      join(dir, 'config.yaml'),
      `resources:\n- name: e\n  type: ${base}/t/evil/v1/evil.jinja\n`,
    );
    const r = await runDm(['install'], { env, cwd: dir });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /import '\.\.\/\.\.\/secret' must be a relative path inside/);
  });

  it('dm resolve prints a URL reference with its files and digest', async () => {
    const env = await isolatedEnv();
    const url = `${base}/t/redis/v1/redis.jinja`;
    const r = await runDm(['resolve', url, '-o', 'json'], { env });
    assert.equal(r.code, 0, r.stderr);
    const [out] = JSON.parse(r.stdout);
    assert.equal(out.reference, url);
    assert.deepEqual(
      out.files.map((f: { path: string }) => f.path),
      ['helpers/common.jinja', 'redis.jinja', 'redis.jinja.schema'],
    );
    assert.match(out.digest, /^sha256:[0-9a-f]{64}$/);
  });

  it('a missing URL is exit 3', async () => {
    const env = await isolatedEnv();
    const dir = await mkdtemp(join(tmpdir(), 'dm-url-'));
    await writeFile(join(dir, 'config.yaml'), `resources:\n- name: e\n  type: ${base}/nope/x.jinja\n`);
    const r = await runDm(['install'], { env, cwd: dir });
    assert.equal(r.code, 3, r.stderr);
  });
});
