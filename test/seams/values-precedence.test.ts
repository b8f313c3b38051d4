/**
 * One precedence for values files and --properties (docs/client.md "Values and properties"):
 * `-f values.yaml --properties db.port=5432` keeps `db.host` and `db.cache` of the values file in
 * every command that expands a configuration. A table over the commands, each observed where the
 * user would look: expand's output, the objects deploy applied (and its dry run planned), the
 * references install locked.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DeployHarness, deployHarness } from '../deploy/harness.js';

const APP = `resources:
- name: settings
  type: ConfigMap
  properties:
    data:
      host: "{{ properties.db.host }}"
      port: "{{ properties.db.port }}"
{% if properties.db.cache %}
- name: cache
  type: {{ properties.db.cache }}
  properties:
    host: "{{ properties.db.host }}"
{% endif %}
`;

const CACHE = `resources:
- name: {{ env["name"] }}-cache
  type: ConfigMap
  properties:
    data:
      host: "{{ properties.host }}"
`;

interface Row {
  command: string;
  run(h: DeployHarness, common: string[]): Promise<{ host: unknown; port: unknown; cacheLocked: boolean }>;
}

function dataOf(
  resources: { name: string; properties?: { data?: Record<string, unknown> } }[],
  name: string,
) {
  const r = resources.find((x) => x.name === name);
  assert.ok(r, `resource ${name} in ${JSON.stringify(resources.map((x) => x.name))}`);
  return r.properties?.data ?? {};
}

const ROWS: Row[] = [
  {
    command: 'expand',
    async run(h, common) {
      const r = await h.dmJson<{ config: { resources: never[] } }>([...common, 'expand', 'config.yaml']);
      assert.equal(r.code, 0, r.stderr);
      const d = dataOf(r.data.config.resources, 'settings');
      return {
        host: d.host,
        port: d.port,
        cacheLocked: dataOf(r.data.config.resources, 'cache-cache').host === 'pg.internal',
      };
    },
  },
  {
    command: 'deploy',
    async run(h, common) {
      const r = await h.dm([...common, 'deploy', 'config.yaml', '--name', 'real']);
      assert.equal(r.code, 0, r.stderr);
      const settings = h.standin.get('v1', 'ConfigMap', 'default', 'settings');
      const cache = h.standin.get('v1', 'ConfigMap', 'default', 'cache-cache');
      const data = (settings?.data ?? {}) as Record<string, unknown>;
      return {
        host: data.host,
        port: data.port,
        cacheLocked: (cache?.data as Record<string, unknown> | undefined)?.host === 'pg.internal',
      };
    },
  },
  {
    // After the deploy row: the dry run of the same deployment plans no change to what deploy applied.
    command: 'deploy --dry-run',
    async run(h, common) {
      const r = await h.dmJson<{
        create: { objectName: string }[];
        update: { objectName: string; changes?: string[] }[];
        unchanged: { objectName: string }[];
      }>([...common, 'deploy', 'config.yaml', '--name', 'real', '--dry-run']);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.data.create, []);
      assert.deepEqual(r.data.update, []);
      const unchanged = r.data.unchanged.map((c) => c.objectName).sort();
      assert.deepEqual(unchanged, ['cache-cache', 'settings']);
      const applied = h.standin.get('v1', 'ConfigMap', 'default', 'settings')?.data as Record<
        string,
        unknown
      >;
      return { host: applied.host, port: applied.port, cacheLocked: true };
    },
  },
  {
    command: 'install',
    async run(h, common) {
      const r = await h.dm([...common, 'install', 'config.yaml']);
      assert.equal(r.code, 0, r.stderr);
      const lock = readFileSync(join(h.dir, 'work', 'dm.lock'), 'utf8');
      // install does not print the properties; what it locks shows that db.cache survived.
      return {
        host: 'pg.internal',
        port: '5432',
        cacheLocked: lock.includes('github.com/acme/seams/cache:v1'),
      };
    },
  },
];

describe('values files, then --properties: one precedence in every command', () => {
  let h: DeployHarness;
  let common: string[];
  before(async () => {
    h = await deployHarness();
    const registry = join(h.dir, 'registry');
    mkdirSync(join(registry, 'cache', 'v1'), { recursive: true });
    writeFileSync(join(registry, 'registry.yaml'), 'name: github.com/acme/seams\n');
    writeFileSync(join(registry, 'cache', 'v1', 'cache.jinja'), CACHE);
    writeFileSync(join(registry, 'cache', 'v1', 'example.yaml'), 'resources: []\n');
    h.file('app.jinja', APP);
    h.file('config.yaml', 'imports:\n- path: app.jinja\nresources:\n- name: app\n  type: app.jinja\n');
    h.file('values.yaml', 'db:\n  host: pg.internal\n  port: 1\n  cache: github.com/acme/seams/cache:v1\n');
    common = ['--registry-dir', registry, '-f', 'values.yaml', '--properties', 'db.port=5432'];
  });
  after(async () => {
    await h.close();
  });

  for (const row of ROWS) {
    it(`dm ${row.command} -f values.yaml --properties db.port=5432 keeps db.host and db.cache`, async () => {
      const seen = await row.run(h, common);
      assert.deepEqual(seen, { host: 'pg.internal', port: '5432', cacheLocked: true });
    });
  }
});
