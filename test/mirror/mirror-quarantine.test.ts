/**
 * A mirror and its upstream's checksum log and quarantine (docs/integrity-store.md §6), with real
 * processes on each database: an origin dm-registry indexing a copy of registry-fixtures, an eager
 * mirror (`--index <upstream>/<name>`) and a pull-through mirror, both with a webhook receiver.
 * When a published version is edited at the origin, the origin quarantines it; the mirrors keep
 * the first-seen bytes, show the version quarantined (resolve answer, registry status) and
 * notify their own webhooks once.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { repoRoot } from '../support/run-cli.js';
import { DIALECTS, dbArgs } from './dialect.js';

const NAME = 'github.com/dm-samples/templates';
const PIN = `${NAME}/redis:=v1.1`;
const ADMIN = 'mirror-quarantine-admin';
const env = { DM_ADMIN_TOKEN: ADMIN };
const admin = { authorization: `Bearer ${ADMIN}` };
const dir = mkdtempSync(join(tmpdir(), 'dm-mirror-quarantine-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Hook {
  url: string;
  received: {
    event?: string;
    template?: string;
    version?: string;
    newDigest?: string;
    changedFiles?: { path: string }[];
  }[];
  close(): Promise<void>;
}

async function hook(): Promise<Hook> {
  const received: Hook['received'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

async function json<T>(url: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as T };
}

interface Resolved {
  digest: string;
  quarantined?: { since: string; newDigest: string; changedFiles: { path: string }[] };
}

const resolve = (server: RunningRegistry, ref = PIN) =>
  json<Resolved>(`${server.url}/api/v1/resolve?ref=${encodeURIComponent(ref)}`);

async function sync(server: RunningRegistry): Promise<{ status: string }> {
  const r = await json<{ status: string }>(`${server.url}/api/v1/registries/${NAME}/sync`, {
    method: 'POST',
    headers: admin,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** The verifier key of the checksum log signed with `keyFile` (created when missing). */
function verifierKey(keyFile: string): string {
  const r = spawnSync(
    process.execPath,
    [join(repoRoot, 'bin', 'dm-registry.js'), 'checksum-key', '--checksum-key', keyFile],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  const out = join(dir, `${keyFile.split('/').pop()}.pub`);
  writeFileSync(out, r.stdout);
  return out;
}

/** Waits (bounded) until `check` holds: notifications are sent after the answer. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(check(), what);
}

for (const dialect of DIALECTS) {
  describe(`a mirror of a quarantining upstream on ${dialect}`, () => {
    const registryDir = join(dir, `registry-${dialect}`);
    let origin: RunningRegistry;
    let eager: RunningRegistry;
    let pulling: RunningRegistry;
    let verifying: RunningRegistry;
    let misled: RunningRegistry;
    let eagerHook: Hook;
    let pullingHook: Hook;

    before(async () => {
      cpSync(join(repoRoot, 'registry-fixtures'), registryDir, { recursive: true });
      const originKey = join(dir, `origin-${dialect}.key`);
      const rightKey = verifierKey(originKey);
      const wrongKey = verifierKey(join(dir, `other-${dialect}.key`));
      origin = await startRegistry([registryDir], env, ['--checksum-key', originKey]);
      // Mirrors that know a checksum key for the upstream: its own, and another log's.
      [verifying, misled] = await Promise.all([
        startRegistry([], env, [
          '--upstream',
          origin.url,
          '--upstream-checksum-key',
          rightKey,
          '--upstream-ttl',
          '0',
          ...(await dbArgs(dialect)),
        ]),
        startRegistry([], env, [
          '--upstream',
          origin.url,
          '--upstream-checksum-key',
          wrongKey,
          ...(await dbArgs(dialect)),
        ]),
      ]);
      [eagerHook, pullingHook] = await Promise.all([hook(), hook()]);
      [eager, pulling] = await Promise.all([
        startRegistry([`${origin.url}/${NAME}`], env, [
          '--upstream',
          origin.url,
          '--notify-url',
          eagerHook.url,
          ...(await dbArgs(dialect)),
        ]),
        startRegistry([], env, [
          '--upstream',
          origin.url,
          '--notify-url',
          pullingHook.url,
          ...(await dbArgs(dialect)),
        ]),
      ]);
    });

    after(async () => {
      await Promise.all([
        eager?.stop(),
        pulling?.stop(),
        origin?.stop(),
        eagerHook?.close(),
        pullingHook?.close(),
      ]);
    });

    it('a version quarantined upstream is quarantined on the mirror, which keeps the first bytes and notifies once', async () => {
      assert.match((await sync(eager)).status, /^(succeeded|unchanged)$/);
      const first = await resolve(eager);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.quarantined, undefined);

      writeFileSync(
        join(registryDir, 'redis', 'v1.1', 'redis.jinja'),
        'resources: [] # edited after publication\n',
      );
      assert.equal((await sync(origin)).status, 'succeeded');
      const upstream = await resolve(origin);
      assert.equal(upstream.body.digest, first.body.digest, 'the origin keeps serving the first-seen digest');
      assert.ok(upstream.body.quarantined, 'the origin quarantined it');

      assert.equal((await sync(eager)).status, 'succeeded');
      const mirrored = await resolve(eager);
      assert.equal(mirrored.body.digest, first.body.digest);
      assert.equal(mirrored.body.quarantined?.newDigest, upstream.body.quarantined.newDigest);
      assert.deepEqual(
        mirrored.body.quarantined?.changedFiles.map((f) => f.path),
        ['redis.jinja'],
      );
      const status = await json<{ quarantined?: { template: string; version: string; newDigest: string }[] }>(
        `${eager.url}/api/v1/registries/${NAME}`,
        { headers: admin },
      );
      assert.deepEqual(
        status.body.quarantined?.map((q) => [q.template, q.version, q.newDigest]),
        [[`${NAME}/redis`, 'v1.1', upstream.body.quarantined.newDigest]],
      );
      await eventually(() => eagerHook.received.length >= 1, 'the eager mirror notified its webhook');
      assert.equal(eagerHook.received[0]?.event, 'version.quarantined');
      assert.equal(eagerHook.received[0]?.newDigest, upstream.body.quarantined.newDigest);
      assert.deepEqual(
        eagerHook.received[0]?.changedFiles?.map((f) => f.path),
        ['redis.jinja'],
      );

      // A pull-through mirror learns it from the resolve answer of its first pull.
      const pulled = await resolve(pulling);
      assert.equal(pulled.status, 200, JSON.stringify(pulled.body));
      assert.equal(pulled.body.digest, first.body.digest);
      await eventually(
        () => pullingHook.received.length >= 1,
        'the pull-through mirror notified its webhook',
      );
      assert.equal((await resolve(pulling)).body.quarantined?.newDigest, upstream.body.quarantined.newDigest);

      // Another sync changes nothing: no second notification.
      await sync(eager);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(eagerHook.received.length, 1);
      assert.equal(pullingHook.received.length, 1);
    });

    it('a mirror that knows the upstream log key verifies what it pulls, and refuses and says so on a mismatch', async () => {
      const good = await resolve(verifying);
      assert.equal(good.status, 200, JSON.stringify(good.body));
      const bad = await json<{ error: { code: string; message: string } }>(
        `${misled.url}/api/v1/resolve?ref=${encodeURIComponent(PIN)}`,
      );
      assert.equal(bad.status, 502, JSON.stringify(bad.body));
      assert.equal(bad.body.error.code, 'UPSTREAM_CHECKSUM_MISMATCH');
      assert.match(bad.body.error.message, /checksum log does not confirm .*not stored/);
      const archive = await fetch(
        `${misled.url}/api/v1/templates/${NAME}/redis/versions/v1.1/archive.tar.gz`,
      );
      assert.equal(archive.status, 502, 'nothing was stored');
      await archive.arrayBuffer();
    });

    it('a change accepted upstream is taken by the next mirror sync and by a verifying pull-through', async () => {
      const before = await resolve(origin);
      const newDigest = before.body.quarantined?.newDigest;
      assert.ok(newDigest);
      const { id } = (
        await json<{ id: number }>(`${origin.url}/api/v1/registries/${NAME}`, { headers: admin })
      ).body;
      const accepted = await json<{ newDigest: string }>(
        `${origin.url}/api/v1/registries/${id}/versions/redis@v1.1/accept`,
        {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/json' },
          body: JSON.stringify({ reason: 'reviewed' }),
        },
      );
      assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
      let served = await resolve(origin);
      for (let i = 0; i < 100 && served.body.digest !== newDigest; i++) {
        await new Promise((r) => setTimeout(r, 100));
        served = await resolve(origin);
      }
      assert.equal(served.body.digest, newDigest, 'the origin serves the accepted content');

      assert.equal((await sync(eager)).status, 'succeeded');
      const mirrored = await resolve(eager);
      assert.equal(mirrored.body.digest, newDigest);
      assert.equal(mirrored.body.quarantined, undefined);
      const status = await json<{ quarantined?: unknown[] }>(`${eager.url}/api/v1/registries/${NAME}`, {
        headers: admin,
      });
      assert.equal(status.body.quarantined, undefined);

      // The verifying mirror revalidates the floating reference (--upstream-ttl 0) and checks the
      // superseding record against the upstream's log before replacing what it stored.
      const floating = await resolve(verifying, `${NAME}/redis:v1.1`);
      assert.equal(floating.status, 200, JSON.stringify(floating.body));
      assert.equal(floating.body.digest, newDigest);
      assert.equal((await resolve(verifying)).body.digest, newDigest);
    });

    it("a quarantine the upstream closes by reverting its source closes on the mirror's next sync", async () => {
      const file = join(registryDir, 'redis', 'v1.0.3', 'redis.jinja');
      const original = readFileSync(file);
      const pin = `${NAME}/redis:=v1.0.3`;
      writeFileSync(file, 'resources: [] # edited, then reverted\n');
      assert.equal((await sync(origin)).status, 'succeeded');
      assert.ok((await resolve(origin, pin)).body.quarantined);
      assert.equal((await sync(eager)).status, 'succeeded');
      assert.ok((await resolve(eager, pin)).body.quarantined, 'quarantined on the mirror');
      writeFileSync(file, original);
      assert.equal((await sync(origin)).status, 'succeeded');
      assert.equal((await resolve(origin, pin)).body.quarantined, undefined);
      assert.equal((await sync(eager)).status, 'succeeded');
      assert.equal((await resolve(eager, pin)).body.quarantined, undefined, 'closed on the mirror');
    });
  });
}
