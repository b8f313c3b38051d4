/**
 * Issue 15 item 7: tokens created and revoked with the CLI while a real dm-registry runs are seen
 * within about a second (no restart, no query per request); `--expires` makes a token lapse;
 * `token list` shows ids, roles and last use, never a token.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { get } from 'node:http';
import { describe, it } from 'node:test';
import { DIALECTS, FIXTURES } from '../helpers.js';
import { BIN, type RegistryProcess, startRegistry } from './process.js';

/** `dm-registry token …` on the running server's database, in its directory (its ./data). */
function cli(server: RegistryProcess, ...args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, 'token', ...args, '--db', server.db], {
    encoding: 'utf8',
    cwd: server.dir,
  });
  assert.equal(r.status, 0, `token ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** GET with a fresh connection each time (no keep-alive socket to go stale between polls). */
function statusOf(url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

/** Polls (bounded: 100 × 50 ms) until `status` answers `want`. */
async function eventually(status: () => Promise<number>, want: number): Promise<void> {
  let last = 0;
  for (let i = 0; i < 100; i++) {
    last = await status();
    if (last === want) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`expected ${want}, still ${last}`);
}

for (const dialect of DIALECTS) {
  describe(`hostile: token lifecycle on a running server (${dialect})`, () => {
    it('create, use, list, revoke and expire without a restart', async () => {
      const server = await startRegistry(['--index', `${FIXTURES}=git.secret.corp/acme/private`], {
        dialect,
      });
      try {
        const adminToken = cli(server, 'create', '--admin');
        const asAdmin = () => statusOf(`${server.url}/api/v1/registries`, adminToken);
        await eventually(asAdmin, 200);
        const listed = cli(server, 'list');
        assert.match(listed, /^1\tadmin\t-\tcreated /m);
        assert.ok(!listed.includes(adminToken));
        // Last use is written with the watcher's tick.
        for (let i = 0; i < 100 && !/last used \d/.test(cli(server, 'list')); i++) {
          await asAdmin();
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.match(cli(server, 'list'), /last used \d{4}-/);
        assert.equal(cli(server, 'revoke', '1'), 'revoked');
        await eventually(asAdmin, 401);
        // Revoking by the token itself.
        const second = cli(server, 'create', '--admin');
        const asSecond = () => statusOf(`${server.url}/api/v1/registries`, second);
        await eventually(asSecond, 200);
        cli(server, 'revoke', second);
        await eventually(asSecond, 401);
        // Expiry: a token that lapses after 1 s is refused once that time has passed.
        // Its expiry is set inside the CLI's process: measured once that has returned, the time
        // below is an upper bound of its creation, whatever the CLI took to start.
        const short = cli(server, 'create', '--admin', '--expires', '1s');
        const created = Date.now();
        const asShort = () => statusOf(`${server.url}/api/v1/registries`, short);
        while (Date.now() < created + 1500) await new Promise((r) => setTimeout(r, 100));
        assert.equal(await asShort(), 401);
        const bad = spawnSync(process.execPath, [BIN, 'token', 'create', '--admin', '--expires', 'soon'], {
          encoding: 'utf8',
          cwd: server.dir,
        });
        assert.equal(bad.status, 2, bad.stderr);
        assert.match(bad.stderr, /--expires 'soon'/);
        const missing = spawnSync(process.execPath, [BIN, 'token', 'revoke', '999', '--db', server.db], {
          encoding: 'utf8',
          cwd: server.dir,
        });
        assert.notEqual(missing.status, 0);
        assert.match(missing.stderr, /no such token/);
        assert.equal(await server.stop(), 0);
      } catch (error) {
        throw new Error(`${(error as Error).message}\n${server.log().slice(-3000)}`);
      } finally {
        server.dispose();
      }
    });
  });
}
