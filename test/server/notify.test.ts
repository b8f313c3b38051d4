/**
 * Quarantine notifications (docs/integrity-store.md §2) against real HTTP receivers that fail:
 * bounded retries, a timeout per attempt, nothing thrown into the process, no delivery mark; and
 * the dm-registry flags and command of the checksum log.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseVerifierKey } from '../../client/src/integrity/index.js';
import { Notifier, notificationBody, signatureOf } from '../../server/src/notify.js';
import type { QuarantineEvent } from '../../server/src/store/contract.js';
import { DIALECTS, postgresDatabase, tempDir } from './helpers.js';

const BIN = join(process.cwd(), 'bin', 'dm-registry.js');

const EVENT: QuarantineEvent = {
  registryId: 1,
  registry: 'github.com/acme/templates',
  template: 'github.com/acme/templates/redis',
  version: 'v1.0.3',
  firstDigest: `sha256:${'a'.repeat(64)}`,
  newDigest: `sha256:${'b'.repeat(64)}`,
  changedFiles: [{ path: 'redis.jinja', old: 'a'.repeat(64), new: 'b'.repeat(64) }],
  treeSha: null,
  since: 0,
  openId: undefined,
};

describe('quarantine notifications', () => {
  it('Notifier retries a failing receiver a bounded number of times, times out a hanging one, never throws', async () => {
    let failing = 0;
    const hanging: import('node:http').ServerResponse[] = [];
    const server = createServer((req, res) => {
      if (req.url === '/hang') {
        hanging.push(res);
        return;
      }
      failing++;
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const logged: string[] = [];
    /** Why each URL of the second notifier was not delivered to. */
    const errors: string[] = [];
    let delivered = false;
    try {
      // Answers always arrive from the failing receiver (a long timeout): exactly 3 attempts.
      const failingNotifier = new Notifier({
        urls: [`${base}/fail`],
        attempts: 3,
        retryBaseMs: 1,
        timeoutMs: 60_000,
        log: (_level, message) => logged.push(message),
      });
      failingNotifier.send(EVENT, () => {
        delivered = true;
      });
      await failingNotifier.idle();
      assert.equal(failing, 3);
      const notifier = new Notifier({
        urls: [`${base}/hang`, 'http://127.0.0.1:1/closed'],
        secret: 's',
        attempts: 3,
        retryBaseMs: 1,
        timeoutMs: 200,
        log: (_level, message, fields) => {
          logged.push(message);
          errors.push(String(fields?.error));
        },
      });
      notifier.send(EVENT, () => {
        delivered = true;
      });
      await notifier.idle();
      // At most 3 attempts reached the hanging receiver (one that timed out before arriving is not seen).
      assert.ok(hanging.length <= 3, `${hanging.length} attempts`);
      assert.equal(delivered, false);
      assert.deepEqual(logged, Array(3).fill('notification not delivered'));
      // In words (docs/errors.md "Unreachable: the reason"), not fetch's bare "fetch failed".
      assert.ok(errors.includes('fetch never connects to this port (bad port)'), errors.join('; '));
    } finally {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('signatureOf() is the hex HMAC-SHA256 of the exact body, like GitHub', () => {
    const body = notificationBody(EVENT);
    assert.equal(JSON.parse(body).event, 'version.quarantined');
    assert.match(signatureOf('s', body), /^sha256=[0-9a-f]{64}$/);
    assert.notEqual(signatureOf('s', body), signatureOf('t', body));
  });
});

for (const dialect of DIALECTS) {
  describe(`checksum log flags of dm-registry (${dialect})`, () => {
    // On PostgreSQL "beside the database" is ./data of the working directory (docs/server.md).
    const databaseIn = async (dir: string) =>
      dialect === 'sqlite' ? join(dir, 'data', 'registry.db') : postgresDatabase();

    it('dm-registry checksum-key creates log.key (0600) beside the database once and prints its verifier key', async () => {
      const dir = tempDir();
      try {
        const db = await databaseIn(dir);
        const first = spawnSync(process.execPath, [BIN, 'checksum-key', '--db', db], {
          encoding: 'utf8',
          cwd: dir,
        });
        assert.equal(first.status, 0, first.stderr);
        const key = parseVerifierKey(first.stdout.trim());
        assert.match(key.name, /\/checksums$/);
        const file = join(dir, 'data', 'log.key');
        assert.equal(statSync(file).mode & 0o777, 0o600);
        assert.match(readFileSync(file, 'utf8'), /^PRIVATE\+KEY\+/);
        const again = spawnSync(process.execPath, [BIN, 'checksum-key', '--db', db], {
          encoding: 'utf8',
          cwd: dir,
        });
        assert.equal(again.stdout, first.stdout);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('dm-registry start refuses a --notify-url that is not http(s) and a key file that is not a signer key', async () => {
      const dir = tempDir();
      try {
        const db = await databaseIn(dir);
        const start = (...args: string[]) =>
          spawnSync(process.execPath, [BIN, 'start', '--db', db, '--port', '0', ...args], {
            encoding: 'utf8',
            cwd: dir,
          });
        const url = start('--notify-url', 'ftp://x');
        assert.equal(url.status, 2, url.stderr);
        assert.match(url.stderr, /--notify-url 'ftp:\/\/x' is not an http\(s\) URL/);
        const bad = join(dir, 'bad.key');
        writeFileSync(bad, 'PRIVATE+KEY+secret-looking-text\n');
        const key = start('--checksum-key', bad);
        assert.equal(key.status, 1, key.stderr);
        assert.match(key.stderr, new RegExp(`${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
        assert.ok(!key.stderr.includes('secret-looking-text'), key.stderr);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
