/**
 * `dm install --registry-url` checks each digest it locks against the registry server's checksum
 * log (docs/integrity.md §5), against real dm-registry processes: an honest server passes and the
 * checkpoint is remembered; a server that answers another digest than its own log is refused
 * (nothing locked); a server whose log does not extend the remembered checkpoint is refused;
 * DM_NOSUMCHECK exempts a registry. The honest case runs against a PostgreSQL-backed server too.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateLogKey, parseVerifierKey } from '../../client/src/integrity/index.js';
import { type PostgresCluster, postgresBinaries, startPostgres } from '../support/postgres.js';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';
import { type RegistryProcess, startRegistry as startRegistryOn } from './hostile/process.js';

const NAME = 'github.com/dm-samples/templates';
const FIXTURES = join(repoRoot, 'registry-fixtures');
const OTHER_DIGEST = `sha256:${'ab'.repeat(32)}`;

/** A server in front of `upstream` that rewrites every digest of batch resolve answers. */
async function lyingProxy(upstream: string): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const forward = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            let text = Buffer.concat(body).toString('utf8');
            if (req.url === '/api/v1/resolve')
              text = text.replace(/"digest":"sha256:[0-9a-f]{64}"/g, `"digest":"${OTHER_DIGEST}"`);
            const headers = { ...answer.headers };
            delete headers['content-length'];
            res.writeHead(answer.statusCode ?? 502, headers).end(text);
          });
        },
      );
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** A project whose configuration uses one template of the registry. */
async function project(): Promise<string> {
  const p = await mkdtemp(join(tmpdir(), 'dm-proj-'));
  await writeFile(join(p, 'config.yaml'), `resources:\n- name: cache\n  type: ${NAME}/redis:v1.0\n`);
  return p;
}

describe('dm install verifies digests against the checksum log', () => {
  let dir: string;
  let keyFile: string;
  let verifierKey: string;
  let honest: RunningRegistry;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dm-checksums-'));
    const keys = generateLogKey('registry.test/checksums');
    keyFile = join(dir, 'log.key');
    writeFileSync(keyFile, `${keys.signerKey}\n`, { mode: 0o600 });
    verifierKey = keys.verifierKey;
    honest = await startRegistry([`${FIXTURES}=${NAME}`], {}, ['--checksum-key', keyFile]);
  });
  after(async () => {
    await honest?.stop();
  });

  it('an honest server passes; the verified checkpoint is remembered in the state directory', async () => {
    const env: Record<string, string> = { ...(await isolatedEnv()), DM_CHECKSUM_KEY: verifierKey };
    const p = await project();
    const r = await runDm(['install', '--registry-url', honest.url], { env, cwd: p });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(honest.requests().some((q) => q.startsWith('GET /api/v1/checksums/lookup/')));
    const name = parseVerifierKey(verifierKey).name;
    const saved = await readFile(
      join(env.XDG_STATE_HOME ?? '', 'dm', 'checksums', encodeURIComponent(name), 'latest'),
      'utf8',
    );
    assert.match(saved, /^registry\.test\/checksums\n\d+\n/);
    assert.ok(existsSync(join(p, 'dm.lock')));
  });

  it('a server answering another digest than its own log is refused, and nothing is locked', async () => {
    const proxy = await lyingProxy(honest.url);
    try {
      const env: Record<string, string> = { ...(await isolatedEnv()), DM_CHECKSUM_KEY: verifierKey };
      const p = await project();
      const r = await runDm(['install', '--registry-url', proxy.url, '-o', 'json'], { env, cwd: p });
      assert.equal(r.code, 1, r.stderr);
      const error = JSON.parse(r.stdout).error;
      assert.equal(error.code, 'CHECKSUM_MISMATCH');
      assert.match(
        error.message,
        new RegExp(`${NAME}/redis:v1\\.0\\.3 .*${OTHER_DIGEST}.*checksum log registry\\.test/checksums`),
      );
      assert.deepEqual(await readdir(p), ['config.yaml']);

      // DM_NOSUMCHECK exempts the registry (on purpose: the proxy's digests are then not checked here).
      const exempt = await runDm(['install', '--registry-url', proxy.url], {
        env: { ...env, DM_NOSUMCHECK: 'github.com/dm-samples/*' },
        cwd: p,
      });
      assert.notEqual(exempt.stderr.includes('CHECKSUM'), true, exempt.stderr);
    } finally {
      await proxy.close();
    }
  });

  it('a log that does not extend the remembered checkpoint is refused', async () => {
    const env: Record<string, string> = { ...(await isolatedEnv()), DM_CHECKSUM_KEY: verifierKey };
    const first = await runDm(['install', '--registry-url', honest.url], { env, cwd: await project() });
    assert.equal(first.code, 0, first.stderr);
    // Another log under the same key: the same registry with one published version's file changed.
    const forked = join(dir, 'forked');
    cpSync(FIXTURES, forked, { recursive: true });
    writeFileSync(join(forked, 'postgres', 'v1', 'example.yaml'), 'resources: []\n');
    const fork = await startRegistry([`${forked}=${NAME}`], {}, ['--checksum-key', keyFile]);
    try {
      const r = await runDm(['install', '--registry-url', fork.url, '-o', 'json'], {
        env,
        cwd: await project(),
      });
      assert.equal(r.code, 1, r.stderr);
      const error = JSON.parse(r.stdout).error;
      assert.equal(error.code, 'CHECKSUM_LOG_INCONSISTENT');
      assert.match(error.message, /contradicts the one verified before/);
    } finally {
      await fork.stop();
    }
  });
});

if (postgresBinaries()) {
  describe('dm install verifies digests against the checksum log of a PostgreSQL-backed server', () => {
    let cluster: PostgresCluster;
    let server: RegistryProcess;
    let verifierKey: string;
    before(async () => {
      cluster = await startPostgres();
      const dir = await mkdtemp(join(tmpdir(), 'dm-checksums-pg-'));
      const keys = generateLogKey('registry-pg.test/checksums');
      const keyFile = join(dir, 'log.key');
      writeFileSync(keyFile, `${keys.signerKey}\n`, { mode: 0o600 });
      verifierKey = keys.verifierKey;
      server = await startRegistryOn(['--index', `${FIXTURES}=${NAME}`, '--checksum-key', keyFile], {
        db: await cluster.createDatabase('checksums'),
        dir,
        cwd: dir,
      });
    });
    after(async () => {
      if (server) {
        await server.stop();
        server.dispose();
      }
      cluster?.stop();
    });

    it('an honest server passes; the verified checkpoint is remembered in the state directory', async () => {
      const env: Record<string, string> = { ...(await isolatedEnv()), DM_CHECKSUM_KEY: verifierKey };
      const p = await project();
      const r = await runDm(['install', '--registry-url', server.url], { env, cwd: p });
      assert.equal(r.code, 0, r.stderr);
      assert.match(server.log(), /\/api\/v1\/checksums\/lookup\//);
      const saved = await readFile(
        join(
          env.XDG_STATE_HOME ?? '',
          'dm',
          'checksums',
          encodeURIComponent('registry-pg.test/checksums'),
          'latest',
        ),
        'utf8',
      );
      assert.match(saved, /^registry-pg\.test\/checksums\n\d+\n/);
      assert.ok(existsSync(join(p, 'dm.lock')));
    });
  });
}
