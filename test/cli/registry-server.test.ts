import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DIALECTS, postgresDatabase } from '../server/helpers.js';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

const NAME = 'github.com/dm-samples/templates';
const FIXTURES = join(repoRoot, 'registry-fixtures');

for (const dialect of DIALECTS)
  describe(`dm against a real dm-registry server (--registry-url, ${dialect})`, () => {
    let server: RunningRegistry;
    before(async () => {
      const db = dialect === 'postgres' ? await postgresDatabase() : undefined;
      server = await startRegistry([`${FIXTURES}=${NAME}`], {}, [], { db });
    });
    after(async () => {
      await server?.stop();
    });

    it('resolves with the same version and digests as the registry directory', async () => {
      const env = await isolatedEnv();
      const viaServer = await runDm(
        [
          'resolve',
          'redis:v1.0',
          'big-data/spark:v2',
          '--registry',
          'dm-samples/templates',
          '--registry-url',
          server.url,
          '-o',
          'json',
        ],
        { env },
      );
      assert.equal(viaServer.code, 0, viaServer.stderr);
      const viaDir = await runDm(
        ['resolve', 'redis:v1.0', 'big-data/spark:v2', '--registry-dir', `${FIXTURES}=${NAME}`, '-o', 'json'],
        { env },
      );
      assert.equal(viaDir.code, 0, viaDir.stderr);
      const strip = (list: { version: string; digest: string; files: unknown }[]) =>
        list.map((r) => [r.version, r.digest, r.files]);
      assert.deepEqual(strip(JSON.parse(viaServer.stdout)), strip(JSON.parse(viaDir.stdout)));
      assert.equal(JSON.parse(viaServer.stdout)[0].version, 'v1.0.3');
    });

    it('dm install costs one batch resolve plus the content not cached; a warm run makes no request', async () => {
      const env = await isolatedEnv();
      const dir = await mkdtemp(join(tmpdir(), 'dm-proj-'));
      await writeFile(
        join(dir, 'config.yaml'),
        `resources:\n- name: cache\n  type: ${NAME}/redis:v1.0\n- name: db\n  type: ${NAME}/postgres:v1\n`,
      );
      const before = server.requests().length;
      const cold = await runDm(['install', '--registry-url', server.url, '-o', 'json'], { env, cwd: dir });
      assert.equal(cold.code, 0, cold.stderr);
      const coldRequests = server.requests().slice(before);
      const resolves = coldRequests.filter((r) => r === 'POST /api/v1/resolve');
      assert.ok(resolves.length >= 1 && resolves.length <= 2, coldRequests.join('\n'));
      const files = coldRequests.filter((r) => r.includes('/files/'));
      assert.equal(files.length, JSON.parse(cold.stdout).filesFetched, coldRequests.join('\n'));
      assert.equal(coldRequests.length, resolves.length + files.length, coldRequests.join('\n'));
      const lock = await readFile(join(dir, 'dm.lock'), 'utf8');

      const mark = server.requests().length;
      const warm = await runDm(['install', '--registry-url', server.url], { env, cwd: dir });
      assert.equal(warm.code, 0, warm.stderr);
      assert.deepEqual(server.requests().slice(mark), [], 'warm install: no network requests');
      assert.equal(await readFile(join(dir, 'dm.lock'), 'utf8'), lock);
    });

    it('a missing version is exit 3 with the versions that exist', async () => {
      const env = await isolatedEnv();
      const r = await runDm(
        ['resolve', `${NAME}/redis:v1.0.99`, '--registry-url', server.url, '-o', 'json'],
        {
          env,
        },
      );
      assert.equal(r.code, 3, r.stderr);
      assert.equal(JSON.parse(r.stdout).error.code, 'VERSION_NOT_FOUND');
    });

    it('dm search finds templates and dm versions lists them', async () => {
      const env = await isolatedEnv();
      const s = await runDm(['search', 'redis', '--registry-url', server.url, '-o', 'json'], { env });
      assert.equal(s.code, 0, s.stderr);
      assert.ok(
        JSON.parse(s.stdout).hits.some((h: { reference: string }) => h.reference === `${NAME}/redis`),
      );
      const v = await runDm(['versions', `${NAME}/redis`, '--registry-url', server.url, '-o', 'json'], {
        env,
      });
      assert.equal(v.code, 0, v.stderr);
      assert.ok(JSON.parse(v.stdout).versions.includes('v1.0.3'));
    });

    it('--registry-url with the API path copied from a curl line: the hint names the server address', async () => {
      const env = await isolatedEnv();
      const base = server.url.replace(/\/+$/, '');
      for (const args of [
        ['search', 'redis'],
        ['resolve', `${NAME}/redis:v1.0`],
      ]) {
        const r = await runDm([...args, '--registry-url', `${base}/api/v1`], { env });
        assert.equal(r.code, 3, `${args.join(' ')}: ${r.stderr}`);
        assert.match(
          r.stderr,
          new RegExp(
            `\nhint: --registry-url is the server's address, without /api/v1: --registry-url ${base}\n?$`,
          ),
        );
      }
    });

    it('dm search shows the description in DESCRIPTION; dm versions marks the latest and pre-releases', async () => {
      const env = await isolatedEnv();
      const json = await runDm(['search', 'redis', '--registry-url', server.url, '-o', 'json'], { env });
      const hit = (JSON.parse(json.stdout).hits as { reference: string; description?: string }[]).find(
        (h) => h.reference === `${NAME}/redis`,
      );
      assert.ok(hit?.description, 'the hit has a description');
      const text = await runDm(['search', 'redis', '--registry-url', server.url], { env });
      assert.equal(text.code, 0, text.stderr);
      const row = text.stdout.split('\n').find((l) => l.startsWith(`${NAME}/redis `));
      assert.ok(row?.includes(hit.description), row);
      const v = await runDm(['versions', 'redis', '--registry-dir', 'registry-fixtures'], { env });
      assert.equal(v.code, 0, v.stderr);
      assert.match(v.stdout, /^ {2}v1\.1 {2}\(latest\)$/m);
      assert.match(v.stdout, /^ {2}v2\.0\.0-rc\.1 {2}\(pre-release\)$/m);
      assert.match(v.stdout, /^ {2}v1\.0\.3$/m);
      // With a version: what it may float to, newest first, and the one it resolves to.
      const floated = await runDm(
        ['versions', 'redis:v1.0', '--registry-dir', 'registry-fixtures', '-o', 'json'],
        {
          env,
        },
      );
      assert.equal(floated.code, 0, floated.stderr);
      const data = JSON.parse(floated.stdout) as {
        versions: string[];
        requested: string;
        resolvesTo: string;
      };
      assert.deepEqual(data.versions, ['v1.0.3', 'v1.0.1', 'v1']);
      assert.equal(data.requested, 'v1.0');
      const resolved = await runDm(
        ['resolve', 'redis:v1.0', '--registry-dir', 'registry-fixtures', '-o', 'json'],
        {
          env,
        },
      );
      assert.equal(data.resolvesTo, (JSON.parse(resolved.stdout) as { version: string }[])[0]?.version);
      const floatedText = await runDm(['versions', 'redis:v1.0', '--registry-dir', 'registry-fixtures'], {
        env,
      });
      assert.match(
        floatedText.stdout,
        /^github\.com\/\S+\/redis v1\.0\n {2}v1\.0\.3 {2}\(v1\.0 resolves to it\)\n {2}v1\.0\.1\n {2}v1\n$/,
      );
      const none = await runDm(['versions', 'redis:v1.0.9', '--registry-dir', 'registry-fixtures'], { env });
      assert.equal(none.code, 3, none.stderr);
      assert.match(
        none.stderr,
        /^error: no version of \S+\/redis matches v1\.0\.9 \(have for v1\.0: v1, v1\.0\.1, v1\.0\.3; newest: v1\.1\)\n/,
      );
    });

    it('a registry the server does not host: the failure says so, after the chain tried GitHub', async () => {
      const env = { ...(await isolatedEnv()), GITHUB_API_URL: 'http://127.0.0.1:9' };
      const r = await runDm(
        ['resolve', 'github.com/nosuch/elsewhere/redis:v1', '--registry-url', server.url, '-o', 'json'],
        { env },
      );
      assert.equal(r.code, 5, r.stderr);
      const error = JSON.parse(r.stdout).error as { hint?: string };
      assert.equal(
        error.hint?.startsWith(
          `the registry server at ${server.url} does not host github.com/nosuch/elsewhere`,
        ),
        true,
        r.stdout,
      );
      assert.match(r.stderr, /does not host github\.com\/nosuch\/elsewhere/);
    });

    it('an unreachable server is exit 5 with one sentence', async () => {
      const env = await isolatedEnv();
      const r = await runDm(['resolve', `${NAME}/redis:v1`, '--registry-url', 'http://127.0.0.1:9'], { env });
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stderr, /cannot reach the registry server/);
    });
  });
