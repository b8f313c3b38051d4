/**
 * A bundle imported into a SQLite file that a running dm-registry serves (docs/server.md, "Store";
 * docs/mirroring.md): two real processes, the server and `dm-registry bundle import`. The server's
 * generation watch sees the import's commit and serves the new version (resolve, files, search,
 * pages) without a restart, as replicas on PostgreSQL see each other's swaps.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { repoRoot } from '../support/run-cli.js';

const BIN = join(repoRoot, 'bin', 'dm-registry.js');
const dir = mkdtempSync(join(tmpdir(), 'dm-live-import-'));
const REGISTRY = 'github.com/dm-samples/templates';
const ZEBRA = 'resources:\n- name: zebra-{{ env["deployment"] }}\n  type: zebra\n';
/** How long the server may take to see the import: a limit for a loaded machine, not a timing. */
const LIMIT_MS = 60_000;

function ok(args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: 'utf8' });
  assert.equal(r.status, 0, `dm-registry ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function exportBundle(db: string, out: string): void {
  ok(['bundle', 'export', '--out', out, '--registry', REGISTRY, '--db', db]);
}

/** Asks `url` until `done` says the answer is the one awaited, or the limit passes. */
async function eventually(url: string, done: (res: Response, body: string) => boolean): Promise<string> {
  const limit = Date.now() + LIMIT_MS;
  for (;;) {
    const res = await fetch(url);
    const body = await res.text();
    if (done(res, body)) return body;
    assert.ok(Date.now() < limit, `${url} still answers ${res.status} ${body.slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

before(() => {
  // The origin: the sample registry, then the same with one more template.
  const source = join(dir, 'source');
  cpSync(join(repoRoot, 'registry-fixtures'), source, { recursive: true });
  ok(['index', source, '--db', join(dir, 'origin.db')]);
  exportBundle(join(dir, 'origin.db'), join(dir, 'first.tgz'));
  mkdirSync(join(source, 'zebra', 'v1.0'), { recursive: true });
  writeFileSync(join(source, 'zebra', 'v1.0', 'zebra.jinja'), ZEBRA);
  writeFileSync(join(source, 'zebra', 'v1.0', 'example.yaml'), 'resources: []\n');
  ok(['index', source, '--db', join(dir, 'origin.db')]);
  exportBundle(join(dir, 'origin.db'), join(dir, 'second.tgz'));
});

after(() => rmSync(dir, { recursive: true, force: true }));

describe('a bundle imported into the SQLite file of a running server', () => {
  it('is served without a restart: resolve, files, search and pages', async () => {
    const db = join(dir, 'airgap.db');
    let server: RunningRegistry | undefined;
    try {
      // A registry the server does not have yet, then a version of a registry it serves.
      server = await startRegistry([], {}, [], { db });
      const redis = `${server.url}/api/v1/resolve?ref=${encodeURIComponent(`${REGISTRY}/redis:v1.0`)}`;
      const zebra = `${server.url}/api/v1/resolve?ref=${encodeURIComponent(`${REGISTRY}/zebra:v1`)}`;
      assert.equal((await fetch(redis)).status, 404);
      ok(['bundle', 'import', join(dir, 'first.tgz'), '--db', db]);
      await eventually(redis, (res) => res.status === 200);
      // Cached now: the registry's templates, and zebra's absence.
      assert.equal((await fetch(zebra)).status, 404);
      const searchZebra = `${server.url}/api/v1/search?q=zebra`;
      assert.deepEqual((JSON.parse(await (await fetch(searchZebra)).text()) as { hits: unknown[] }).hits, []);

      ok(['bundle', 'import', join(dir, 'second.tgz'), '--db', db]);
      const resolved = JSON.parse(await eventually(zebra, (res) => res.status === 200)) as {
        version: string;
        files: { path: string }[];
      };
      assert.equal(resolved.version, 'v1.0');
      const file = await fetch(
        `${server.url}/api/v1/templates/${REGISTRY}/zebra/versions/v1.0/files/zebra.jinja`,
      );
      assert.equal(file.status, 200);
      assert.equal(await file.text(), ZEBRA);
      const search = JSON.parse(await (await fetch(searchZebra)).text()) as { hits: { name: string }[] };
      assert.deepEqual(
        search.hits.map((h) => h.name),
        ['zebra'],
      );
      const page = await fetch(`${server.url}/templates/${REGISTRY}/zebra`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /zebra/);
    } finally {
      await server?.stop();
    }
  });
});
