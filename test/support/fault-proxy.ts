/**
 * A fault-injecting HTTP proxy for mirroring tests: it forwards requests to a target on loopback,
 * or (as the test says) refuses connections, answers a status of its choosing (401, 403, 429 with
 * Retry-After, 500, 503), answers garbage (`malformed`: a truncated JSON body, or for an archive
 * path bytes that are no archive), or holds the request until it is told to let go, and counts every request
 * it saw, by path. Bound to 127.0.0.1 on a free port; only ever forwards to the one target it was
 * given.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** `only`: the fault applies to requests whose path starts with it; the others are forwarded. */
export type FaultMode =
  | { mode: 'pass' }
  | { mode: 'refuse'; only?: string }
  | { mode: 'status'; status: number; retryAfter?: string; only?: string }
  | { mode: 'hang'; only?: string }
  | { mode: 'html'; only?: string }
  | { mode: 'malformed'; only?: string };

export interface FaultProxy {
  url: string;
  /** Requests seen (every one, whatever the mode), in order: `GET /api/v1/resolve?…`. */
  seen: string[];
  /** Requests forwarded to the target. */
  forwarded: string[];
  set(mode: FaultMode): void;
  /** Requests forwarded whose path (without query) starts with `prefix`. */
  count(prefix: string): number;
  /** Forwarded requests the target answered with `status`, as `STATUS METHOD URL` (e.g. the 304s). */
  answered: string[];
  /** Forwarded requests whose path starts with `prefix` that the target answered with `status`. */
  countStatus(status: number, prefix: string): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const targetUrl = new URL(target);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(targetUrl.hostname)) {
    throw new Error(`fault proxy: target must be on loopback, got ${targetUrl.hostname}`);
  }
  let mode: FaultMode = { mode: 'pass' };
  const seen: string[] = [];
  const forwarded: string[] = [];
  const answered: string[] = [];
  const sockets = new Set<Socket>();
  const held = new Set<ServerResponse>();

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const line = `${req.method} ${req.url}`;
    seen.push(line);
    const applies = !('only' in mode) || mode.only === undefined || (req.url ?? '').startsWith(mode.only);
    switch (applies ? mode.mode : 'pass') {
      case 'refuse':
        req.socket.destroy();
        return;
      case 'hang':
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      case 'html':
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>captive portal</body></html>');
        return;
      case 'malformed':
        if ((req.url ?? '').split('?')[0]!.endsWith('.tar.gz')) {
          res.writeHead(200, { 'content-type': 'application/gzip' }).end('this is not a gzip archive');
        } else {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"registry": "github.com/dm-sam');
        }
        return;
      case 'status': {
        if (mode.mode !== 'status') return;
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (mode.retryAfter !== undefined) headers['retry-after'] = mode.retryAfter;
        res
          .writeHead(mode.status, headers)
          .end(JSON.stringify({ error: { code: 'INJECTED', message: `injected ${mode.status}` } }));
        return;
      }
      case 'pass': {
        forwarded.push(line);
        const upstream = httpRequest(
          {
            host: targetUrl.hostname,
            port: targetUrl.port,
            method: req.method,
            path: req.url,
            headers: { ...req.headers, host: targetUrl.host },
          },
          (answer) => {
            answered.push(`${answer.statusCode} ${line}`);
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        upstream.on('error', () => {
          if (!res.headersSent) res.writeHead(502).end();
          else res.destroy();
        });
        req.pipe(upstream);
        return;
      }
    }
  });
  server.on('connection', (socket) => {
    if (mode.mode === 'refuse' && mode.only === undefined) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    forwarded,
    answered,
    set(next) {
      mode = next;
      if (next.mode !== 'hang') for (const res of held) res.destroy();
    },
    count(prefix) {
      return forwarded.filter((l) => l.split(' ')[1]!.split('?')[0]!.startsWith(prefix)).length;
    },
    countStatus(status, prefix) {
      return answered.filter((l) => {
        const [code, , url] = l.split(' ');
        return code === String(status) && url!.split('?')[0]!.startsWith(prefix);
      }).length;
    },
    reset() {
      seen.length = 0;
      forwarded.length = 0;
      answered.length = 0;
    },
    async close() {
      for (const res of held) res.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
