/**
 * A mirror and its upstream's checksum log and quarantine (docs/integrity-store.md §6), with real
 * processes on each database: an origin dm-registry indexing a copy of registry-fixtures, an eager
 * mirror (`--index <upstream>/<name>`) and a pull-through mirror, both with a webhook receiver.
 * When a published version is edited at the origin, the origin quarantines it; the mirrors keep
 * the first-seen bytes, show the version quarantined (resolve answer, registry status) and
 * notify their own webhooks once. A pull-through mirror with a short `--upstream-ttl` learns the
 * quarantine, the acceptance and the revert of versions it holds by exact pin from the upstream's
 * version list, and never serves other bytes than it stored unless the upstream's log says the
 * change was accepted.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseRecord } from '../../client/src/integrity/index.js';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { repoRoot } from '../support/run-cli.js';
import { DIALECTS, dbArgs, postgresDatabase } from './dialect.js';

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
  removedUpstream?: boolean;
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

/** An admin accepts the changed content of a quarantined version on `server` (`template@version`). */
async function accept(server: RunningRegistry, key: string): Promise<void> {
  const { id } = (await json<{ id: number }>(`${server.url}/api/v1/registries/${NAME}`, { headers: admin }))
    .body;
  const accepted = await json<{ newDigest: string }>(
    `${server.url}/api/v1/registries/${id}/versions/${key}/accept`,
    {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'reviewed' }),
    },
  );
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
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

/**
 * Waits until `check` holds: notifications are sent after the answer. The bound (60 s) only ends a
 * test that failed; a busy machine may take seconds.
 */
async function eventually(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(check(), what);
}

/**
 * Resolves `ref` on `server` until `done` holds of the answer (at most 60 s: a mirror revalidates
 * in the background, after its TTL); `each` checks every answer on the way.
 */
async function resolveUntil(
  server: RunningRegistry,
  ref: string,
  done: (r: Resolved) => boolean,
  each: (r: Resolved) => void,
  what: string,
): Promise<Resolved> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await resolve(server, ref);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    each(r.body);
    if (done(r.body)) return r.body;
    assert.ok(Date.now() < deadline, `${what}: still ${JSON.stringify(r.body.quarantined ?? r.body.digest)}`);
    await new Promise((wait) => setTimeout(wait, 100));
  }
}

/** The content of one file of an exact version, as `server` serves it. */
async function fileOf(server: RunningRegistry, template: string, version: string, path: string) {
  const res = await fetch(
    `${server.url}/api/v1/templates/${NAME}/${template}/versions/${version}/files/${path}`,
  );
  assert.equal(res.status, 200, `${template}@${version}/${path}`);
  return Buffer.from(await res.arrayBuffer());
}

/** The newest record of a version in `server`'s checksum log. */
async function logRecord(server: RunningRegistry, template: string, version: string) {
  const r = await json<{ record: string }>(
    `${server.url}/api/v1/checksums/lookup/${NAME}/${template}@${version}`,
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return parseRecord(r.body.record);
}

for (const dialect of DIALECTS) {
  describe(`a mirror of a quarantining upstream on ${dialect}`, () => {
    const registryDir = join(dir, `registry-${dialect}`);
    let origin: RunningRegistry;
    let eager: RunningRegistry;
    let pulling: RunningRegistry;
    let verifying: RunningRegistry;
    let misled: RunningRegistry;
    let pinned: RunningRegistry;
    let pinnedDb: string;
    let eagerHook: Hook;
    let pullingHook: Hook;
    let pinnedHook: Hook;

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
      [eagerHook, pullingHook, pinnedHook] = await Promise.all([hook(), hook(), hook()]);
      // A pull-through mirror that revalidates what it holds every second.
      pinnedDb = dialect === 'sqlite' ? join(dir, `pinned-${dialect}.db`) : await postgresDatabase();
      pinned = await startRegistry(
        [],
        env,
        ['--upstream', origin.url, '--upstream-ttl', '1', '--notify-url', pinnedHook.url],
        { db: pinnedDb },
      );
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
        pinned?.stop(),
        verifying?.stop(),
        misled?.stop(),
        origin?.stop(),
        eagerHook?.close(),
        pullingHook?.close(),
        pinnedHook?.close(),
      ]);
    });

    /** `mirror` pulls an exact version through; what it stored, and the origin's file behind it. */
    async function holdPin(mirror: RunningRegistry, template: string, version: string, path: string) {
      const pin = `${NAME}/${template}:=${version}`;
      const held = await resolve(mirror, pin);
      assert.equal(held.status, 200, JSON.stringify(held.body));
      const file = join(registryDir, template, version, path);
      return { pin, firstDigest: held.body.digest, file, original: readFileSync(file) };
    }

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
      await accept(origin, 'redis@v1.1');
      let served = await resolve(origin);
      const deadline = Date.now() + 60_000;
      while (served.body.digest !== newDigest && Date.now() < deadline) {
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

    it('a pull-through mirror learns that a version it holds by exact pin was quarantined, then accepted, upstream', async () => {
      const { pin, firstDigest, file, original } = await holdPin(pinned, 'redis', 'v1.0.1', 'redis.jinja');
      const edited = Buffer.from('resources: [] # edited after the mirror pinned it\n');
      writeFileSync(file, edited);
      assert.equal((await sync(origin)).status, 'succeeded');
      const upstream = (await resolve(origin, pin)).body;
      const newDigest = upstream.quarantined?.newDigest;
      assert.ok(newDigest, 'the origin quarantined it');

      const quarantined = await resolveUntil(
        pinned,
        pin,
        (r) => r.quarantined !== undefined,
        (r) => assert.equal(r.digest, firstDigest, 'the first-seen digest while quarantined'),
        'the upstream quarantine reaches the pinned version',
      );
      assert.equal(quarantined.quarantined?.newDigest, newDigest);
      assert.deepEqual(
        quarantined.quarantined?.changedFiles.map((f) => f.path),
        ['redis.jinja'],
      );
      assert.ok(
        (await fileOf(pinned, 'redis', 'v1.0.1', 'redis.jinja')).equals(original),
        'the stored bytes',
      );
      await eventually(() => pinnedHook.received.length === 1, 'the mirror notified its webhook');
      assert.equal(pinnedHook.received[0]?.version, 'v1.0.1');
      assert.equal(pinnedHook.received[0]?.newDigest, newDigest);

      await accept(origin, 'redis@v1.0.1');
      const taken = await resolveUntil(
        pinned,
        pin,
        (r) => r.digest === newDigest,
        (r) => assert.ok([firstDigest, newDigest].includes(r.digest), r.digest),
        'the acceptance reaches the pinned version',
      );
      assert.equal(taken.quarantined, undefined);
      assert.ok(
        (await fileOf(pinned, 'redis', 'v1.0.1', 'redis.jinja')).equals(edited),
        'the accepted bytes',
      );
      // The mirror's own log supersedes the first digest, as an eager mirror's does.
      const record = await logRecord(pinned, 'redis', 'v1.0.1');
      assert.deepEqual([record.digest, record.supersedes], [newDigest, firstDigest]);
      const status = await json<{ quarantined?: unknown[] }>(`${pinned.url}/api/v1/registries/${NAME}`, {
        headers: admin,
      });
      assert.equal(status.body.quarantined, undefined);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(pinnedHook.received.length, 1, 'one notification');
    });

    it("a pull-through mirror closes its quarantine of a pinned version when the upstream's source goes back", async () => {
      const { pin, firstDigest, file, original } = await holdPin(pinned, 'hpa', 'v1', 'hpa.jinja');
      const sameDigest = (r: Resolved) => assert.equal(r.digest, firstDigest, 'always the first-seen digest');
      writeFileSync(file, 'resources: [] # edited, then reverted\n');
      assert.equal((await sync(origin)).status, 'succeeded');
      assert.ok((await resolve(origin, pin)).body.quarantined, 'quarantined at the origin');
      await resolveUntil(pinned, pin, (r) => r.quarantined !== undefined, sameDigest, 'quarantined here');
      assert.ok((await fileOf(pinned, 'hpa', 'v1', 'hpa.jinja')).equals(original));

      writeFileSync(file, original);
      assert.equal((await sync(origin)).status, 'succeeded');
      assert.equal((await resolve(origin, pin)).body.quarantined, undefined, 'closed at the origin');
      await resolveUntil(pinned, pin, (r) => r.quarantined === undefined, sameDigest, 'closed here');
      const status = await json<{ quarantined?: unknown[] }>(`${pinned.url}/api/v1/registries/${NAME}`, {
        headers: admin,
      });
      assert.equal(status.body.quarantined, undefined);
    });

    it('a pull-through mirror flags a pinned version the upstream no longer serves, and keeps serving it', async () => {
      const { pin, firstDigest, file } = await holdPin(pinned, 'configmap', 'v1.0.1', 'configmap.jinja');
      rmSync(dirname(file), { recursive: true });
      assert.equal((await sync(origin)).status, 'succeeded');
      assert.equal((await resolve(origin, pin)).status, 404, 'gone at the origin');
      await resolveUntil(
        pinned,
        pin,
        (r) => r.removedUpstream === true,
        (r) => assert.equal(r.digest, firstDigest),
        'flagged removed upstream',
      );
      const info = await json<{ upstream?: { removedUpstream: number } }>(
        `${pinned.url}/api/v1/registries/${NAME}`,
        { headers: admin },
      );
      assert.equal(info.body.upstream?.removedUpstream, 1, JSON.stringify(info.body.upstream));
      const archive = await fetch(
        `${pinned.url}/api/v1/templates/${NAME}/configmap/versions/v1.0.1/archive.tar.gz`,
      );
      assert.equal(archive.status, 200);
      await archive.arrayBuffer();
    });

    it('a pull-through mirror never serves a pinned version with bytes the upstream changed without an acceptance', async () => {
      const { pin, firstDigest, file, original } = await holdPin(
        pinned,
        'configmap',
        'v1',
        'configmap.jinja',
      );
      const listEtag = async () => {
        const res = await fetch(`${origin.url}/api/v1/registries/${NAME}/versions`);
        await res.arrayBuffer();
        return res.headers.get('etag');
      };
      const etagBefore = await listEtag();
      // The origin is replaced by one with a new database (no first-seen record, no log record
      // superseding the digest the mirror holds) serving other bytes for the version, at the same URL.
      const url = origin.url;
      await origin.stop();
      writeFileSync(file, 'resources: [] # changed behind the log\n');
      origin = await startRegistry([registryDir], env, [
        '--port',
        new URL(url).port,
        '--checksum-key',
        join(dir, `fresh-${dialect}.key`),
      ]);
      assert.equal(origin.url, url);
      assert.notEqual(await listEtag(), etagBefore, "the new origin's version list has another ETag");
      const upstream = (await resolve(origin, pin)).body;
      assert.notEqual(upstream.digest, firstDigest);
      assert.equal(upstream.quarantined, undefined);

      const seen = await resolveUntil(
        pinned,
        pin,
        (r) => r.quarantined?.newDigest === upstream.digest,
        (r) => assert.equal(r.digest, firstDigest, 'never the digest the upstream changed to'),
        'the disagreement is quarantined here',
      );
      assert.equal(seen.digest, firstDigest);
      assert.ok(
        (await fileOf(pinned, 'configmap', 'v1', 'configmap.jinja')).equals(original),
        'the stored bytes',
      );
      const archive = await fetch(
        `${pinned.url}/api/v1/templates/${NAME}/configmap/versions/v1/archive.tar.gz`,
      );
      assert.equal(archive.status, 200);
      assert.equal(archive.headers.get('cache-status'), 'dm-registry; hit');
      await archive.arrayBuffer();
      const info = await json<{ upstream?: { digestMismatches: number } }>(
        `${pinned.url}/api/v1/registries/${NAME}`,
        { headers: admin },
      );
      assert.ok((info.body.upstream?.digestMismatches ?? 0) >= 1, JSON.stringify(info.body.upstream));
      // Later revalidations keep it so.
      await new Promise((r) => setTimeout(r, 1500));
      await resolveUntil(
        pinned,
        pin,
        () => true,
        (r) => assert.equal(r.digest, firstDigest),
        'still served',
      );
      assert.equal((await logRecord(pinned, 'configmap', 'v1')).digest, firstDigest);
    });

    it('--index <upstream>/<name> makes a registry so far only pulled through a whole mirror', async () => {
      await pinned.stop();
      pinned = await startRegistry([`${origin.url}/${NAME}`], env, ['--upstream', origin.url], {
        db: pinnedDb,
      });
      // The start sync runs in the background: this one queues behind it.
      assert.match((await sync(pinned)).status, /^(succeeded|unchanged)$/);
      interface Info {
        interval: number | null;
        counts: { versions: number };
      }
      const mirrored = await json<Info>(`${pinned.url}/api/v1/registries/${NAME}`, { headers: admin });
      const upstream = await json<Info>(`${origin.url}/api/v1/registries/${NAME}`, { headers: admin });
      assert.ok(mirrored.body.interval !== null && mirrored.body.interval >= 60, 'synced on an interval');
      assert.ok(upstream.body.counts.versions > 20);
      // Every version of the origin, and the one removed there (still served).
      assert.equal(mirrored.body.counts.versions, upstream.body.counts.versions + 1);
    });
  });
}
