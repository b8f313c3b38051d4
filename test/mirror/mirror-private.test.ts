/**
 * A private upstream registry through a mirror (docs/mirroring.md, "Visibility"), with real
 * processes: an origin serving registry-fixtures publicly and a copy of it as the private registry
 * github.com/acme/private, a mirror whose upstream token is a read token for it, and a mirror
 * without a token. The mirror's token decides what it can see upstream; what it stored from the
 * private registry is private on the mirror (never served, listed, searched or named to anonymous
 * callers), readable with the mirror's admin token and a read token for it; a registry mirrored
 * eagerly becomes private when the upstream serves it privately.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, BIN, type RegistryProcess, startRegistry } from '../server/hostile/process.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { repoRoot } from '../support/run-cli.js';
import { DIALECTS, postgresDatabase } from './dialect.js';

const PRIVATE = 'github.com/acme/private';
const PRIVATE_EAGER = 'github.com/acme/private-eager';
const REF = `${PRIVATE}/redis:=v1.0.3`;
const admin = { authorization: `Bearer ${ADMIN}` };
const dir = mkdtempSync(join(tmpdir(), 'dm-mirror-private-'));
let origin: RegistryProcess;
let proxy: FaultProxy;
let mirror: RegistryProcess;
let tokenless: RegistryProcess;
/** The database of each server started here, when not its own SQLite file. */
const databases = new Map<RegistryProcess, string>();

/** A read token for `registry`, made by the CLI on a server's database (seen within a second). */
function readToken(server: RegistryProcess, registry: string): string {
  return execFileSync(
    process.execPath,
    [
      BIN,
      'token',
      'create',
      '--read',
      registry,
      '--db',
      databases.get(server) ?? `file:${join(server.dir, 'r.db')}`,
      // On PostgreSQL its keys go to the server's directory, not ./data of the repository.
      '--data-dir',
      server.dir,
    ],
    { cwd: repoRoot, encoding: 'utf8' },
  ).trim();
}

async function resolve(server: RegistryProcess, ref: string, token?: string) {
  const res = await fetch(`${server.url}/api/v1/resolve?ref=${encodeURIComponent(ref)}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return {
    status: res.status,
    cacheStatus: res.headers.get('cache-status'),
    body: (await res.json()) as { digest?: string; error?: { code: string; message: string } },
  };
}

/**
 * Retries `attempt` until it holds (a token made by the CLI is seen within a second). A request
 * that fails outright is retried too: the CLI may take longer than the server's keep-alive
 * timeout, and a pooled connection the server closes just then fails the next fetch.
 */
async function eventually<T>(attempt: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  let last: { value: T } | { error: unknown } = { error: new Error('not tried') };
  for (let i = 0; i < 60; i++) {
    try {
      last = { value: await attempt() };
      if (ok(last.value)) return last.value;
    } catch (error) {
      last = { error };
    }
    await new Promise((done) => setTimeout(done, 500));
  }
  if ('error' in last) throw last.error;
  return last.value;
}

after(() => rmSync(dir, { recursive: true, force: true }));

for (const dialect of DIALECTS) {
  describe(`private upstreams on ${dialect}`, () => {
    before(async () => {
      const copy = join(dir, `private-${dialect}`);
      cpSync(join(repoRoot, 'registry-fixtures'), copy, { recursive: true });
      origin = await startRegistry(['--index', 'registry-fixtures']);
      for (const name of [PRIVATE, PRIVATE_EAGER]) {
        const added = await fetch(`${origin.url}/api/v1/registries`, {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/json' },
          body: JSON.stringify({ source: copy, name, visibility: 'private' }),
        });
        assert.equal(added.status, 201, await added.text());
        const synced = await fetch(`${origin.url}/api/v1/registries/${name}/sync`, {
          method: 'POST',
          headers: admin,
        });
        assert.equal(((await synced.json()) as { status: string }).status !== 'failed', true);
      }
      const token = readToken(origin, '*');
      // The origin answers the token once it has seen it.
      const seen = await eventually(
        () => resolve(origin, REF, token),
        (r) => r.status === 200,
      );
      assert.equal(seen.status, 200, JSON.stringify(seen.body));
      proxy = await startFaultProxy(origin.url);
      const mirrorDb = dialect === 'postgres' ? await postgresDatabase() : undefined;
      const tokenlessDb = dialect === 'postgres' ? await postgresDatabase() : undefined;
      [mirror, tokenless] = await Promise.all([
        startRegistry(['--upstream', proxy.url, '--upstream-token-env', 'UPSTREAM_TOKEN'], {
          env: { UPSTREAM_TOKEN: token },
          ...(mirrorDb ? { db: mirrorDb } : {}),
        }),
        startRegistry(['--upstream', proxy.url], tokenlessDb ? { db: tokenlessDb } : {}),
      ]);
      if (mirrorDb) databases.set(mirror, mirrorDb);
    });

    after(async () => {
      for (const server of [mirror, tokenless, origin]) {
        await server?.stop();
        server?.dispose();
      }
      await proxy?.close();
    });

    describe('a mirror of a private upstream registry', () => {
      it("the mirror's token decides what it can see upstream: without one the private registry is not found", async () => {
        const r = await resolve(tokenless, REF);
        assert.equal(r.status, 404, JSON.stringify(r.body));
        const registries = (await (
          await fetch(`${tokenless.url}/api/v1/registries`, { headers: admin })
        ).json()) as {
          registries: { name: string }[];
        };
        assert.ok(!registries.registries.some((x) => x.name === PRIVATE), 'nothing stored');
      });

      it('never serves what it pulled from a private registry to anonymous callers, and says nothing of it', async () => {
        const direct = await resolve(origin, REF, ADMIN);
        assert.equal(direct.status, 200);
        const anonymous = await resolve(mirror, REF);
        assert.equal(anonymous.status, 404, JSON.stringify(anonymous.body));
        assert.doesNotMatch(String(anonymous.cacheStatus), /stored|hit/);
        const unknown = await resolve(mirror, 'github.com/acme/nothing-here/redis:=v1.0.3');
        assert.equal(
          anonymous.body.error?.code,
          unknown.body.error?.code,
          'the same answer as for no registry at all',
        );
        // It was stored, privately: the mirror's admin sees it, with the origin's digest, from the store.
        const withAdmin = await resolve(mirror, REF, ADMIN);
        assert.equal(withAdmin.status, 200, JSON.stringify(withAdmin.body));
        assert.equal(withAdmin.body.digest, direct.body.digest);
        assert.equal(withAdmin.cacheStatus, 'dm-registry; hit');
        const files = await fetch(
          `${mirror.url}/api/v1/templates/${PRIVATE}/redis/versions/v1.0.3/archive.tar.gz`,
        );
        assert.equal(files.status, 404, 'content too');
        assert.equal(files.headers.get('cache-status'), null);
        await files.arrayBuffer();
      });

      it('is never listed, counted or searched for anonymous callers; a read token for it reads it', async () => {
        const listed = (await (await fetch(`${mirror.url}/api/v1/registries`)).json()) as {
          registries: { name: string; visibility: string }[];
        };
        assert.ok(!listed.registries.some((r) => r.name === PRIVATE));
        const search = (await (await fetch(`${mirror.url}/api/v1/search?q=redis`)).json()) as {
          hits: { registry: string }[];
          facets: { registry: Record<string, number> };
        };
        assert.ok(!search.hits.some((h) => h.registry === PRIVATE));
        assert.equal(search.facets.registry[PRIVATE], undefined);
        const page = await fetch(`${mirror.url}/registries`);
        assert.doesNotMatch(await page.text(), /acme\/private/);

        const adminView = (await (
          await fetch(`${mirror.url}/api/v1/registries/${PRIVATE}`, { headers: admin })
        ).json()) as {
          visibility: string;
          source: { type: string };
        };
        assert.equal(adminView.visibility, 'private');
        assert.equal(adminView.source.type, 'upstream');
        const token = readToken(mirror, PRIVATE);
        assert.equal(mirror.exited(), undefined, mirror.log());
        const r = await eventually(
          () => resolve(mirror, REF, token),
          (x) => x.status === 200,
        );
        assert.equal(r.status, 200, JSON.stringify(r.body));
      });

      it('a registry mirrored eagerly becomes private on the mirror when the upstream serves it privately', async () => {
        const created = await fetch(`${mirror.url}/api/v1/registries`, {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/json' },
          body: JSON.stringify({ source: `${proxy.url}/${PRIVATE_EAGER}` }),
        });
        assert.equal(created.status, 201, await created.text());
        const synced = (await (
          await fetch(`${mirror.url}/api/v1/registries/${PRIVATE_EAGER}/sync`, {
            method: 'POST',
            headers: admin,
          })
        ).json()) as { status: string };
        assert.ok(['succeeded', 'unchanged'].includes(synced.status), JSON.stringify(synced));
        const view = (await (
          await fetch(`${mirror.url}/api/v1/registries/${PRIVATE_EAGER}`, { headers: admin })
        ).json()) as {
          visibility: string;
          counts: { versions: number };
        };
        assert.equal(view.visibility, 'private');
        assert.ok(view.counts.versions > 20);
        assert.equal((await resolve(mirror, `${PRIVATE_EAGER}/redis:=v1.0.3`)).status, 404);
        assert.equal((await resolve(mirror, `${PRIVATE_EAGER}/redis:=v1.0.3`, ADMIN)).status, 200);
        const anonymous = await fetch(`${mirror.url}/api/v1/registries/${PRIVATE_EAGER}`);
        assert.equal(anonymous.status, 404);
        await anonymous.arrayBuffer();
      });
    });
  });
}
