/**
 * One resolution for `dm install`, `dm install --frozen-lockfile`, `dm expand` and `dm deploy`
 * (docs/client.md "dm install, step by step"): whatever a configuration names — registry
 * references and plain URLs, written in it or emitted by its templates when rendered — resolves to
 * what dm.lock pins, the same for every command, online and offline.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isolatedEnv, runDm } from '../support/run-cli.js';

/** What a URL template renders: a Service whose `generation` property tells which content was used. */
const served = (generation: number) =>
  `resources:\n- name: {{ env["name"] }}\n  type: Service\n  properties: {generation: ${generation}}\n`;

async function registry(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-seam-reg-'));
  await writeFile(join(dir, 'registry.yaml'), 'name: github.com/acme/seam\n');
  await addRedis(dir, 'v1.0.1');
  return dir;
}

async function addRedis(dir: string, version: string): Promise<void> {
  await mkdir(join(dir, 'redis', version), { recursive: true });
  await writeFile(
    join(dir, 'redis', version, 'redis.jinja'),
    `resources:\n- name: {{ env["name"] }}\n  type: Service\n  properties: {version: ${version}}\n`,
  );
  await writeFile(join(dir, 'redis', version, 'example.yaml'), 'resources: []\n');
}

/** A site template that emits, only when rendered, a registry reference and a plain URL. */
async function addSite(dir: string, emittedUrl: string): Promise<void> {
  await mkdir(join(dir, 'site', 'v1'), { recursive: true });
  await writeFile(
    join(dir, 'site', 'v1', 'site.jinja'),
    [
      'resources:',
      '- name: {{ env["name"] }}-cache',
      '  type: {{ "github.com/acme/" ~ "seam/redis" }}:v1.0',
      '- name: {{ env["name"] }}-queue',
      `  type: {{ "${emittedUrl}" }}`,
      '',
    ].join('\n'),
  );
  await writeFile(join(dir, 'site', 'v1', 'example.yaml'), 'resources: []\n');
}

interface Rendered {
  resources: { name: string; properties?: Record<string, unknown> }[];
}

function propertiesOf(expandStdout: string, name: string): Record<string, unknown> | undefined {
  const doc = JSON.parse(expandStdout) as { config?: Rendered } & Rendered;
  const resources = (doc.config ?? doc).resources;
  return resources.find((r) => r.name === name)?.properties;
}

describe('install, frozen install and expand resolve the same references to the same content', () => {
  let server: Server;
  let base: string;
  let generation = 1;
  const files = new Map<string, string>();
  before(async () => {
    server = createServer((req, res) => {
      const body = files.get(req.url ?? '');
      res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/plain' });
      res.end(body ?? 'not found');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('references written in the configuration and emitted when rendered, URLs included', async () => {
    const serve = () => {
      files.set('/q/queue.jinja', served(generation));
      files.set('/q/worker.jinja', served(generation));
    };
    serve();
    const url = `${base}/q/queue.jinja`;
    const emitted = `${base}/q/worker.jinja`;
    const reg = await registry();
    await addSite(reg, emitted);
    const env = await isolatedEnv();
    const project = await mkdtemp(join(tmpdir(), 'dm-seam-proj-'));
    await writeFile(
      join(project, 'config.yaml'),
      `resources:\n- name: direct\n  type: ${url}\n- name: shop\n  type: site:v1\n`,
    );
    const dm = (args: string[]) => runDm(['--registry-dir', reg, ...args], { env, cwd: project });

    const install = await dm(['install', '-o', 'json']);
    assert.equal(install.code, 0, install.stderr);
    assert.deepEqual(
      JSON.parse(install.stdout).references.map((r: { reference: string; version: string }) => [
        r.reference,
        r.version,
      ]),
      [
        ['github.com/acme/seam/redis:v1.0', 'v1.0.1'],
        ['github.com/acme/seam/site:v1', 'v1'],
        [url, ''],
        [emitted, ''],
      ],
    );
    const lock = await readFile(join(project, 'dm.lock'), 'utf8');

    // The sources move on: a new patch, new content behind the URL.
    await addRedis(reg, 'v1.0.2');
    generation = 2;
    serve();

    const frozen = await dm(['install', '--frozen-lockfile', '-o', 'json']);
    assert.equal(frozen.code, 0, frozen.stderr);
    assert.ok(
      JSON.parse(frozen.stdout).references.every((r: { change: string }) => r.change === 'unchanged'),
      frozen.stdout,
    );
    const again = await dm(['install', '-o', 'json']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await readFile(join(project, 'dm.lock'), 'utf8'), lock, 'dm install keeps what is locked');

    // dm expand renders what dm.lock pins, online and offline.
    for (const offline of [[], ['--offline']]) {
      const expand = await dm([...offline, 'expand', 'config.yaml', '-o', 'json']);
      assert.equal(expand.code, 0, `${offline.join(' ')} ${expand.stderr}`);
      assert.deepEqual(propertiesOf(expand.stdout, 'direct'), { generation: 1 }, offline.join(' '));
      assert.deepEqual(propertiesOf(expand.stdout, 'shop-queue'), { generation: 1 }, offline.join(' '));
      assert.deepEqual(propertiesOf(expand.stdout, 'shop-cache'), { version: 'v1.0.1' }, offline.join(' '));
    }

    // dm update floats what is locked, and everything after agrees again.
    const update = await dm(['update', '-o', 'json']);
    assert.equal(update.code, 0, update.stderr);
    const expand = await dm(['expand', 'config.yaml', '-o', 'json']);
    assert.equal(expand.code, 0, expand.stderr);
    assert.deepEqual(propertiesOf(expand.stdout, 'direct'), { generation: 2 });
    assert.deepEqual(propertiesOf(expand.stdout, 'shop-queue'), { generation: 2 });
    assert.deepEqual(propertiesOf(expand.stdout, 'shop-cache'), { version: 'v1.0.2' });
    const frozenAfter = await dm(['install', '--frozen-lockfile']);
    assert.equal(frozenAfter.code, 0, frozenAfter.stderr);
  });
});
