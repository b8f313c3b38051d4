/**
 * Issue 25 item 2: what a version may hold. A registry directory with a version of 1,001 small
 * files (one more than the bound, docs/registry-layout.md `VERSION_TOO_MANY_FILES`) and one of 1,000
 * indexed by a real dm-registry: the big one is a finding of the registry and is not served (its
 * resolve is 404, its page too), the other is served with all its files.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DIALECTS, tempDir } from '../helpers.js';
import { startRegistry } from './process.js';

const NAME = 'local.dm/acme/bulk';

function version(root: string, v: string, files: number): void {
  const dir = join(root, 'bulk', v);
  mkdirSync(join(dir, 'data'), { recursive: true });
  writeFileSync(join(dir, 'bulk.jinja'), 'resources:\n- name: {{ env["name"] }}\n  type: ConfigMap\n');
  writeFileSync(join(dir, 'example.yaml'), 'resources:\n- name: b\n  type: bulk.jinja\n');
  for (let i = 0; i < files - 2; i++) writeFileSync(join(dir, 'data', `f${i}.txt`), `${i}\n`);
}

for (const dialect of DIALECTS) {
  describe(`hostile: a version of many files (${dialect})`, () => {
    it('1,001 files: a finding, not served; 1,000 files: served', async () => {
      const source = tempDir('dm-many-files-');
      version(source, 'v1.0.0', 1001);
      version(source, 'v1.1.0', 1000);
      const server = await startRegistry(['--index', `${source}=${NAME}`], { dialect });
      try {
        const info = (await (await fetch(`${server.url}/api/v1/registries/${NAME}`)).json()) as {
          findings: { code: string; path: string; message: string }[];
        };
        const finding = info.findings.find((f) => f.code === 'VERSION_TOO_MANY_FILES');
        assert.ok(finding, JSON.stringify(info.findings));
        assert.equal(finding.path, 'bulk/v1.0.0');
        assert.match(finding.message, /1001 files, more than the 1000/);
        const exact = await fetch(`${server.url}/api/v1/resolve?ref=${NAME}/bulk:=v1.0.0`);
        assert.equal(exact.status, 404);
        await exact.arrayBuffer();
        const page = await fetch(`${server.url}/templates/${NAME}/bulk/versions/v1.0.0`);
        assert.equal(page.status, 404);
        await page.arrayBuffer();
        const served = await fetch(`${server.url}/api/v1/resolve?ref=${NAME}/bulk:v1.1`);
        assert.equal(served.status, 200, await served.clone().text());
        const resolution = (await served.json()) as { version: string; files: unknown[] };
        assert.equal(resolution.version, 'v1.1.0');
        assert.equal(resolution.files.length, 1000);
        assert.equal(await server.stop(), 0);
      } finally {
        server.dispose();
      }
    });
  });
}
