/**
 * A host that gets no connection says why, in words (docs/errors.md "Unreachable: the reason"):
 * every fetch of dm — registry server, template URL, Deployment Manager, OCI registry, GitHub — that
 * fails before an answer is `cannot reach WHAT: REASON`, exit 5, never a bare "(fetch failed)".
 * Real sockets: a closed port on 127.0.0.1, a `.invalid` host name (which never resolves), a TLS
 * server with a certificate nobody trusts, a server that does not speak HTTP, and fetch's blocked
 * port 1. Library first (the DmError a caller gets), then the CLI (the sentence a user reads).
 */
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createTcpServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ManagerClient } from '../../client/src/deploy/manager-client.js';
import { DmError, exitCodeFor, fromSystemError, networkFailure } from '../../client/src/error.js';
import { OciClient } from '../../client/src/oci/distribution.js';
import { parseReference, type RegistryReference } from '../../client/src/reference/reference.js';
import { ServerResolver } from '../../client/src/resolve/server-resolver.js';
import type { ResolvedFile, ResolvedVersion } from '../../client/src/resolve/types.js';
import { resolveUrl } from '../../client/src/resolve/url-resolver.js';
import { HttpChecksumLog } from '../../client/src/resolve/verify-checksums.js';
import { loopbackCertificate } from '../kube-standin/tls.js';
import { isolatedEnv, runDm } from '../support/run-cli.js';

/** `.invalid` never resolves (RFC 6761); a resolver that cannot be asked at all says EAI_AGAIN. */
const NO_SUCH_HOST = 'no-such-host.invalid';
const DOES_NOT_RESOLVE =
  /the host name (does not resolve \(ENOTFOUND\)|cannot be looked up now, DNS does not answer \(EAI_AGAIN\))/;

/** A port on 127.0.0.1 nothing listens on: bound by the system, then closed. */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function rejection(promise: Promise<unknown>): Promise<DmError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DmError, `a DmError, not ${String(error)}`);
    assert.equal(exitCodeFor(error), 5, error.message);
    return error;
  }
  assert.fail('expected a failure');
}

/** What fetch throws for `url` (it must throw). */
async function fetchError(url: string): Promise<unknown> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(120_000) });
    await response.body?.cancel();
  } catch (error) {
    return error;
  }
  assert.fail(`${url} answered`);
}

const REDIS: RegistryReference = parseReference('github.com/acme/templates/redis:v1') as RegistryReference;

describe('a host that cannot be reached: the reason in words', () => {
  let closed: number;
  /** HTTPS with a self-signed certificate (not trusted by this process). */
  let untrusted: string;
  /** Answers every connection with bytes that are not HTTP. */
  let notHttp: string;
  /** Plain HTTP, asked over TLS. */
  let plainHttp: string;
  const servers: { close(): unknown }[] = [];

  before(async () => {
    closed = await closedPort();
    const cert = loopbackCertificate();
    const https = createHttpsServer({ cert: cert.cert, key: cert.key }, (_req, res) => res.end('{}'));
    servers.push(https);
    untrusted = await listen(https);
    const garbage = createTcpServer((socket) => socket.end('HELLO, this is not HTTP\r\n\r\n'));
    servers.push(garbage);
    notHttp = await listen(garbage);
    const http = createHttpServer((_req, res) => res.end('{}'));
    servers.push(http);
    plainHttp = await listen(http);
  });
  after(() => {
    for (const server of servers) server.close();
  });

  it('networkFailure() says what real fetch failures were, with the system code', async () => {
    const cases: [string, RegExp, string][] = [
      [`http://${NO_SUCH_HOST}:8080/`, DOES_NOT_RESOLVE, 'dns'],
      [`http://127.0.0.1:${closed}/`, /^connection refused \(ECONNREFUSED\)$/, 'refused'],
      [
        `https://${untrusted}/`,
        /^the server's certificate is not accepted: self-signed certificate \(DEPTH_ZERO_SELF_SIGNED_CERT\)$/,
        'certificate',
      ],
      [
        `https://${plainHttp}/`,
        /^the TLS handshake failed: wrong version number \(ERR_SSL_WRONG_VERSION_NUMBER\)$/,
        'tls',
      ],
      [`http://${notHttp}/`, /^what answered does not speak HTTP/, 'not-http'],
      ['http://127.0.0.1:1/', /^fetch never connects to this port \(bad port\)$/, 'blocked-port'],
    ];
    for (const [url, reason, kind] of cases) {
      const error = await fetchError(url);
      assert.equal((error as Error).message, 'fetch failed', 'what fetch itself says, for every case');
      const failure = networkFailure(error);
      assert.ok(failure, `${url}: a network failure`);
      assert.match(failure.reason, reason, url);
      assert.equal(failure.kind, kind, url);
    }
    assert.equal(networkFailure(new Error('something else')), undefined);
    assert.equal(networkFailure('not an error'), undefined);
  });

  it('fromSystemError() says a real DNS failure and a refused connection as "cannot reach HOST: reason"', async () => {
    const dns = await lookup(NO_SUCH_HOST).then(
      () => assert.fail(`${NO_SUCH_HOST} resolved`),
      (error: unknown) => error,
    );
    const said = fromSystemError(dns);
    assert.equal(said?.code, 'UNREACHABLE');
    assert.match(said!.message, new RegExp(`^cannot reach ${NO_SUCH_HOST}: ${DOES_NOT_RESOLVE.source}$`));
    const refused = fromSystemError(await fetchError(`http://127.0.0.1:${closed}/`));
    assert.equal(refused?.message, `cannot reach 127.0.0.1:${closed}: connection refused (ECONNREFUSED)`);
    assert.equal(exitCodeFor(refused), 5);
  });

  it('library: the registry server, a template URL and the Deployment Manager each name themselves and the reason', async () => {
    const dns = await rejection(new ServerResolver({ url: `http://${NO_SUCH_HOST}:8080` }).resolve([REDIS]));
    assert.equal(dns.code, 'REGISTRY_UNREACHABLE');
    assert.match(
      dns.message,
      new RegExp(
        `^cannot reach the registry server at http://${NO_SUCH_HOST}:8080: ${DOES_NOT_RESOLVE.source}$`,
      ),
    );
    assert.match(dns.hint ?? '', /check --registry-url/);

    const refused = await rejection(
      new ServerResolver({ url: `http://127.0.0.1:${closed}` }).resolve([REDIS]),
    );
    assert.equal(
      refused.message,
      `cannot reach the registry server at http://127.0.0.1:${closed}: connection refused (ECONNREFUSED)`,
    );

    const url = await rejection(resolveUrl(`https://127.0.0.1:${closed}/lb.yaml`));
    assert.equal(url.code, 'URL_UNREACHABLE');
    assert.equal(
      url.message,
      `cannot reach https://127.0.0.1:${closed}/lb.yaml: connection refused (ECONNREFUSED)`,
    );

    const certificate = await rejection(resolveUrl(`https://${untrusted}/lb.yaml`));
    assert.equal(
      certificate.message,
      `cannot reach https://${untrusted}/lb.yaml: the server's certificate is not accepted: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)`,
    );
    assert.match(certificate.hint ?? '', /NODE_EXTRA_CA_CERTS/);

    const manager = await rejection(
      new ManagerClient({ url: `http://127.0.0.1:${closed}` }).request('GET', '/api/v1/deployments'),
    );
    assert.equal(manager.code, 'MANAGER_UNREACHABLE');
    assert.equal(
      manager.message,
      `cannot reach the Deployment Manager at http://127.0.0.1:${closed}: connection refused (ECONNREFUSED)`,
    );
  });

  it('library: an answer cut off in the middle is unreachable, an answer larger than dm reads is refused before reading', async () => {
    // Answers with headers promising 1000 bytes, sends a few and closes (a cut); for the paths of
    // BIG, declares a gigabyte instead.
    const BIG = /^\S+ \S*(\/big\.bin|\/checksums\/latest|\/templates\/github\.com\/acme\/templates\/big) /;
    const cutting = createTcpServer((socket) => {
      socket.once('data', (request) => {
        const big = BIG.test(request.toString('latin1'));
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${big ? 2 ** 30 : 1000}\r\n\r\n{"results": [`,
        );
        if (!big) setTimeout(() => socket.destroy(), 20);
      });
      socket.on('error', () => {});
    });
    servers.push(cutting);
    const at = `http://${await listen(cutting)}`;
    const resolver = new ServerResolver({ url: at });

    const cut = await rejection(resolver.resolve([REDIS]));
    assert.equal(cut.code, 'REGISTRY_UNREACHABLE', 'not "not a dm registry server"');
    assert.match(cut.hint ?? '', /^check --registry-url/, 'no TLS hint for an http:// server');
    assert.equal(
      cut.message,
      `cannot reach the registry server at ${at}: the other side closed the connection (UND_ERR_SOCKET)`,
    );
    const manager = await rejection(new ManagerClient({ url: at }).request('GET', '/api/v1/deployments'));
    assert.equal(manager.code, 'MANAGER_UNREACHABLE');
    assert.match(manager.message, /: the other side closed the connection \(UND_ERR_SOCKET\)$/);
    const oci = await rejection(
      new OciClient({ host: at.slice('http://'.length), plainHttp: true }).listTags('acme/templates/redis'),
    );
    assert.equal(oci.code, 'OCI_UNREACHABLE');
    assert.match(
      oci.message,
      /^cannot reach the OCI registry 127\.0\.0\.1:\d+ for .*: the other side closed the connection \(UND_ERR_SOCKET\)$/,
    );

    const refused = async (promise: Promise<unknown>): Promise<DmError> => {
      try {
        await promise;
      } catch (error) {
        assert.ok(error instanceof DmError, String(error));
        assert.equal(exitCodeFor(error), 1, error.message);
        return error;
      }
      assert.fail('expected a failure');
    };
    const file = await refused(
      resolver.fetchFile(
        { template: 'github.com/acme/templates/redis', version: 'v1' } as ResolvedVersion,
        { path: 'big.bin' } as ResolvedFile,
      ),
    );
    assert.equal(file.code, 'REGISTRY_ANSWER_TOO_LARGE');
    assert.equal(
      file.message,
      `the registry server at ${at} answered /api/v1/templates/github.com/acme/templates/redis/versions/v1/files/big.bin with more than ${32 * 1024 * 1024} bytes`,
    );
    const versions = await refused(
      resolver.versions(parseReference('github.com/acme/templates/big:v1') as RegistryReference),
    );
    assert.equal(versions.code, 'REGISTRY_ANSWER_TOO_LARGE');
    assert.match(versions.message, new RegExp(`with more than ${64 * 1024 * 1024} bytes$`));
    const checkpoint = await refused(new HttpChecksumLog({ url: at }).latestCheckpoint());
    assert.equal(checkpoint.code, 'CHECKSUM_CHECKPOINT_INVALID');
  });

  it('CLI: one sentence with the reason, exit 5, for the registry server, a URL, the Deployment Manager, an OCI registry and GitHub', async () => {
    const env = await isolatedEnv();
    const cases: [string[], RegExp, Record<string, string>?][] = [
      [
        ['resolve', 'github.com/acme/templates/redis:v1', '--registry-url', `http://${NO_SUCH_HOST}:8080`],
        new RegExp(
          `^error: cannot reach the registry server at http://${NO_SUCH_HOST}:8080: ${DOES_NOT_RESOLVE.source}\\nhint: check --registry-url`,
        ),
      ],
      [
        ['search', 'redis', '--registry-url', `http://127.0.0.1:${closed}`],
        new RegExp(
          `^error: cannot reach the registry server at http://127\\.0\\.0\\.1:${closed}: connection refused \\(ECONNREFUSED\\)\\n`,
        ),
      ],
      [
        ['resolve', `https://${NO_SUCH_HOST}/lb.yaml`],
        new RegExp(`^error: cannot reach https://${NO_SUCH_HOST}/lb\\.yaml: ${DOES_NOT_RESOLVE.source}\\n`),
      ],
      [
        ['resolve', `https://${untrusted}/lb.yaml`],
        /^error: cannot reach https:\/\/127\.0\.0\.1:\d+\/lb\.yaml: the server's certificate is not accepted: self-signed certificate \(DEPTH_ZERO_SELF_SIGNED_CERT\)\nhint: .*NODE_EXTRA_CA_CERTS/,
      ],
      [
        ['search', 'redis', '--registry-url', `https://${plainHttp}`],
        /^error: cannot reach the registry server at https:\/\/127\.0\.0\.1:\d+: the TLS handshake failed: wrong version number \(ERR_SSL_WRONG_VERSION_NUMBER\)\nhint: a server that speaks plain HTTP is named http:\/\/… in --registry-url\n/,
      ],
      [
        // oci://<host> is a dm-registry reached over https: plain HTTP is --plain-http there.
        ['search', 'redis', `oci://${plainHttp}`],
        /^error: cannot reach the registry server at https:\/\/127\.0\.0\.1:\d+: the TLS handshake failed: wrong version number \(ERR_SSL_WRONG_VERSION_NUMBER\)\nhint: for a registry that speaks plain HTTP \(a loopback or test registry\), pass --plain-http\n/,
      ],
      [
        ['--manager-url', `http://127.0.0.1:${closed}`, 'deployments', 'list'],
        new RegExp(
          `^error: cannot reach the Deployment Manager at http://127\\.0\\.0\\.1:${closed}: connection refused \\(ECONNREFUSED\\)\\nhint: check --manager-url`,
        ),
      ],
      [
        ['resolve', `oci://127.0.0.1:${closed}/acme/templates/redis:v1`, '--plain-http'],
        new RegExp(
          `^error: cannot reach the OCI registry 127\\.0\\.0\\.1:${closed} for the tags of .*: connection refused \\(ECONNREFUSED\\)\\n`,
        ),
      ],
      [
        ['resolve', 'github.com/acme/templates/redis:v1'],
        new RegExp(
          `^error: cannot reach GitHub \\(127\\.0\\.0\\.1:${closed}\\) for branch HEAD of acme/templates: connection refused \\(ECONNREFUSED\\)\\n`,
        ),
        { GITHUB_API_URL: `http://127.0.0.1:${closed}` },
      ],
      [
        ['resolve', 'github.com/acme/templates/redis:v1'],
        new RegExp(`^error: cannot reach GitHub \\(${NO_SUCH_HOST}\\): ${DOES_NOT_RESOLVE.source}\\n`),
        { GITHUB_API_URL: `http://${NO_SUCH_HOST}` },
      ],
    ];
    for (const [args, says, extra] of cases) {
      const r = await runDm(args, { env: { ...env, ...extra }, killAfterMs: 300_000 });
      assert.equal(r.code, 5, `dm ${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, says, `dm ${args.join(' ')}`);
      assert.doesNotMatch(r.stderr, /fetch failed|\n\s+at /, 'no bare "fetch failed", no stack trace');
      assert.equal(r.stdout, '');
    }
    const json = await runDm(
      [
        'resolve',
        'github.com/acme/templates/redis:v1',
        '--registry-url',
        `http://127.0.0.1:${closed}`,
        '-o',
        'json',
      ],
      { env, killAfterMs: 300_000 },
    );
    assert.equal(json.code, 5, json.stderr);
    const error = (JSON.parse(json.stdout) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'REGISTRY_UNREACHABLE');
    assert.match(error.message, /: connection refused \(ECONNREFUSED\)$/);
  });
});
