/**
 * Issue 15 item 11: SIGTERM under keep-alive load. Clients hammering a real dm-registry over
 * reused sockets see no reset: while draining every response says `Connection: close`, and only
 * then are idle sockets closed; afterwards connections are refused (never half-answered).
 */
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { describe, it } from 'node:test';
import { DIALECTS, FIXTURES } from '../helpers.js';
import { startRegistry } from './process.js';

/** A GET; a failure says whether it was sent on a reused (keep-alive) socket. */
function get(agent: Agent, url: string): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      res.on('error', (error) => reject(Object.assign(error, { reused: req.reusedSocket })));
    });
    req.on('error', (error) => reject(Object.assign(error, { reused: req.reusedSocket })));
    req.end();
  });
}

for (const dialect of DIALECTS) {
  describe(`hostile: SIGTERM under keep-alive load (${dialect})`, () => {
    it('no request on a reused socket is reset while the server drains and stops', async () => {
      const server = await startRegistry(['--index', FIXTURES], { dialect });
      const agent = new Agent({ keepAlive: true, maxSockets: 20 });
      try {
        const url = `${server.url}/api/v1/resolve?ref=redis:v1.0`;
        let ok = 0;
        let closing = 0;
        const failures: string[] = [];
        let signalled = false;
        const loop = async () => {
          for (;;) {
            try {
              const r = await get(agent, url);
              assert.equal(r.status, 200);
              ok++;
              if (r.connection === 'close') closing++;
            } catch (error) {
              const { code = String(error), reused } = error as { code?: string; reused?: boolean };
              // Refused: the server stopped listening; the request was never sent. A new connection
              // still in the kernel's accept queue when the listener closes is reset by the kernel:
              // the server never accepted it, so it is the same answer. The load ends either way.
              if (code === 'ECONNREFUSED' || (code === 'ECONNRESET' && reused === false && signalled)) return;
              failures.push(`${code}${reused ? ' (reused socket)' : ''}`);
              return;
            }
            if (signalled && server.exited() !== undefined) return;
          }
        };
        const loops = Array.from({ length: 20 }, loop);
        while (ok < 500) await new Promise((r) => setTimeout(r, 10));
        signalled = true;
        const exited = server.stop();
        await Promise.all(loops);
        assert.equal(await exited, 0);
        assert.deepEqual(failures, [], `requests reset: ${failures.join(', ')}`);
        assert.ok(closing > 0, 'no response said Connection: close while draining');
      } finally {
        agent.destroy();
        server.dispose();
      }
    });
  });
}
