/**
 * `dm push`, `dm pull oci://…` and `oci://` references against a real OCI registry (Debian's
 * docker-registry, the CNCF distribution server), with Debian's skopeo as an independent client
 * reading what dm pushed (docs/oci.md).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type OciRegistry, startOciRegistry } from '../support/oci-registry.js';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

const fixtures = join(repoRoot, 'registry-fixtures');
const redis = join(fixtures, 'redis', 'v1.0.3');

function skopeoRaw(
  reference: string,
  extra: string[] = [],
): { manifest: Record<string, unknown>; text: string } {
  const text = execFileSync(
    'skopeo',
    ['inspect', '--raw', '--tls-verify=false', ...extra, `docker://${reference}`],
    {
      encoding: 'utf8',
    },
  );
  return { manifest: JSON.parse(text) as Record<string, unknown>, text };
}

async function filesOf(dir: string, prefix = ''): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) for (const [p, c] of await filesOf(dir, path)) out.set(p, c);
    else out.set(path, await readFile(join(dir, path), 'utf8'));
  }
  return out;
}

describe('dm push / pull against a real OCI registry (docker-registry, plain HTTP)', () => {
  let registry: OciRegistry;
  let base: string;
  before(async () => {
    registry = await startOciRegistry();
    base = `oci://${registry.host}/acme/templates`;
  });
  after(() => registry.stop());

  it('pushes a version directory; skopeo reads the manifest dm describes (docs/oci.md "The artifact")', async () => {
    const env = await isolatedEnv();
    const r = await runDm(['push', redis, `${base}/redis`, '--plain-http', '-o', 'json'], { env });
    assert.equal(r.code, 0, r.stderr);
    const pushed = JSON.parse(r.stdout);
    assert.equal(pushed.status, 'pushed');
    assert.equal(pushed.version, 'v1.0.3');

    const { manifest, text } = skopeoRaw(`${registry.host}/acme/templates/redis:v1.0.3`);
    assert.equal(
      `sha256:${execFileSync('sha256sum', { input: text }).toString().split(' ')[0]}`,
      pushed.manifest,
    );
    assert.equal(manifest.schemaVersion, 2);
    assert.equal(manifest.mediaType, 'application/vnd.oci.image.manifest.v1+json');
    assert.equal(manifest.artifactType, 'application/vnd.dm.template.v1');
    const config = manifest.config as { mediaType: string };
    assert.equal(config.mediaType, 'application/vnd.dm.template.config.v1+json');
    const layers = manifest.layers as { mediaType: string }[];
    assert.equal(layers.length, 1);
    assert.equal(layers[0]!.mediaType, 'application/vnd.oci.image.layer.v1.tar+gzip');
    const annotations = manifest.annotations as Record<string, string>;
    assert.equal(annotations['org.opencontainers.image.version'], 'v1.0.3');
    assert.equal(annotations['org.opencontainers.image.title'], 'redis');
    assert.equal(annotations['vnd.dm.template.digest'], pushed.digest);

    // The same files pushed again: the same manifest, nothing replaced.
    const again = await runDm(['push', redis, `${base}/redis`, '--plain-http', '-o', 'json'], { env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).status, 'unchanged');
    assert.equal(JSON.parse(again.stdout).manifest, pushed.manifest);
  });

  it('dm pull gets the version digest dm resolve --registry-dir computes, and the same files', async () => {
    const env = await isolatedEnv();
    const pushed = await runDm(['push', redis, `${base}/redis`, '--plain-http'], { env });
    assert.equal(pushed.code, 0, pushed.stderr);
    const local = await runDm(['resolve', 'redis:v1.0', '--registry-dir', fixtures, '-o', 'json'], { env });
    assert.equal(local.code, 0, local.stderr);
    const to = join(await mkdtemp(join(tmpdir(), 'dm-oci-pull-')), 'redis');
    const pulled = await runDm(['pull', `${base}/redis:v1.0`, '--plain-http', '--to', to, '-o', 'json'], {
      env,
    });
    assert.equal(pulled.code, 0, pulled.stderr);
    const out = JSON.parse(pulled.stdout);
    assert.equal(out.version, 'v1.0.3');
    assert.equal(out.digest, JSON.parse(local.stdout)[0].digest);
    assert.deepEqual(await filesOf(to), await filesOf(redis));
  });

  it('refuses to replace a tag holding other content, naming what differs; --force replaces it', async () => {
    const env = await isolatedEnv();
    const first = await runDm(['push', redis, `${base}/cache`, '--plain-http'], { env });
    assert.equal(first.code, 0, first.stderr);
    const changed = join(await mkdtemp(join(tmpdir(), 'dm-oci-changed-')), 'cache', 'v1.0.3');
    await cp(redis, changed, { recursive: true });
    await writeFile(
      join(changed, 'redis.jinja'),
      `${await readFile(join(redis, 'redis.jinja'), 'utf8')}\n# changed\n`,
    );
    // A version directory named cache/v1.0.3 whose template file is still redis.jinja is not a template.
    const bad = await runDm(['push', changed, `${base}/cache`, '--plain-http'], { env });
    assert.equal(bad.code, 4, bad.stderr);
    assert.match(bad.stderr, /is not a version directory dm can push/);

    const renamed = join(await mkdtemp(join(tmpdir(), 'dm-oci-changed-')), 'redis', 'v1.0.3');
    await cp(changed, renamed, { recursive: true });
    const refused = await runDm(['push', renamed, `${base}/cache`, '--plain-http'], { env });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /already holds other files: changed redis\.jinja; nothing was pushed/);
    assert.doesNotMatch(refused.stderr, /\n\s+at /, 'no stack trace');
    const forced = await runDm(['push', renamed, `${base}/cache`, '--plain-http', '--force', '-o', 'json'], {
      env,
    });
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(JSON.parse(forced.stdout).status, 'replaced');
  });

  it('dm versions lists the tags that are versions; the patch float picks among them', async () => {
    const env = await isolatedEnv();
    for (const v of ['v1', 'v1.0.1', 'v1.0.3', 'v1.1']) {
      const r = await runDm(['push', join(fixtures, 'redis', v), `${base}/floating`, '--plain-http'], {
        env,
      });
      // The directory's template is redis: push it under the repository 'floating'.
      assert.equal(r.code, 0, r.stderr);
    }
    const versions = await runDm(['versions', `${base}/floating`, '--plain-http', '-o', 'json'], { env });
    assert.equal(versions.code, 0, versions.stderr);
    assert.deepEqual(JSON.parse(versions.stdout).versions, ['v1.1', 'v1.0.3', 'v1.0.1', 'v1']);
    const resolved = await runDm(['resolve', `${base}/floating:v1.0`, '--plain-http', '-o', 'json'], { env });
    assert.equal(resolved.code, 0, resolved.stderr);
    assert.equal(JSON.parse(resolved.stdout)[0].version, 'v1.0.3');
    const missing = await runDm(['resolve', `${base}/floating:v3.0`, '--plain-http'], { env });
    assert.equal(missing.code, 3, missing.stderr);
    assert.match(missing.stderr, /no version of .*floating matches v3\.0/);
  });

  it('dm install locks an oci:// type with the manifest digest and dm digest; then works --offline', async () => {
    const env = await isolatedEnv();
    const pushed = await runDm(['push', redis, `${base}/redis`, '--plain-http', '-o', 'json'], { env });
    assert.equal(pushed.code, 0, pushed.stderr);
    const { manifest, digest } = JSON.parse(pushed.stdout);
    const project = await mkdtemp(join(tmpdir(), 'dm-oci-project-'));
    await writeFile(
      join(project, 'config.yaml'),
      `resources:\n- name: cache\n  type: ${base}/redis:v1.0\n  properties:\n    maxMemory: 64mb\n`,
    );
    const installed = await runDm(['install', '--plain-http'], { env, cwd: project });
    assert.equal(installed.code, 0, installed.stderr);
    const lock = await readFile(join(project, 'dm.lock'), 'utf8');
    assert.match(lock, new RegExp(`digest: "${digest}"`));
    assert.match(lock, new RegExp(`manifest: "${manifest}"`));
    assert.match(lock, /version: v1\.0\.3/);

    registry.stop();
    try {
      const offline = await runDm(['expand', 'config.yaml', '--offline', '-o', 'json'], {
        env,
        cwd: project,
      });
      assert.equal(offline.code, 0, offline.stderr);
      assert.match(offline.stdout, /session-cache|cache/);
      const frozen = await runDm(['install', '--frozen-lockfile', '--offline'], { env, cwd: project });
      assert.equal(frozen.code, 0, frozen.stderr);
    } finally {
      registry = await startOciRegistry();
      base = `oci://${registry.host}/acme/templates`;
    }
  });

  it("dm push keeps the namespace's dm-index; dm search oci://host/owner/repo reads it", async () => {
    const env = await isolatedEnv();
    const postgres = join(fixtures, 'postgres', (await readdir(join(fixtures, 'postgres')))[0]!);
    for (const [dir, target] of [
      [redis, `${base}/redis`],
      [join(fixtures, 'redis', 'v1.1'), `${base}/redis`],
      [postgres, `${base}/db/postgres`],
    ] as const) {
      const r = await runDm(['push', dir, target, '--plain-http'], { env });
      assert.equal(r.code, 0, r.stderr);
    }
    const { manifest } = skopeoRaw(`${registry.host}/acme/templates/dm-index:latest`);
    assert.equal(manifest.artifactType, 'application/vnd.dm.index.v1');
    const found = await runDm(
      ['search', 'redis', `oci://${registry.host}/acme/templates`, '--plain-http', '-o', 'json'],
      { env },
    );
    assert.equal(found.code, 0, found.stderr);
    const result = JSON.parse(found.stdout) as { hits: { reference: string; latestVersion: string }[] };
    const hit = result.hits.find((h) => h.reference === `${base}/redis`);
    assert.ok(hit, found.stdout);
    assert.equal(hit.latestVersion, 'v1.1');
    assert.ok(!result.hits.some((h) => h.reference.endsWith('/db/postgres')));
    const db = await runDm(
      ['search', 'postgres', `oci://${registry.host}/acme/templates`, '--plain-http', '-o', 'json'],
      { env },
    );
    assert.equal(db.code, 0, db.stderr);
    assert.deepEqual(
      (JSON.parse(db.stdout) as { hits: { reference: string; collection: string }[] }).hits.map((h) => [
        h.reference,
        h.collection,
      ]),
      [[`${base}/db/postgres`, 'db']],
    );
    const none = await runDm(['search', 'x', `oci://${registry.host}/acme/nothing`, '--plain-http'], { env });
    assert.equal(none.code, 3, none.stderr);
    assert.match(none.stderr, /has no dm-index to search/);
  });

  it('dm outdated and dm update float an oci:// reference over newly pushed tags', async () => {
    const env = await isolatedEnv();
    const repo = `${base}/lines`;
    const first = await runDm(['push', join(fixtures, 'redis', 'v1.0.1'), repo, '--plain-http'], { env });
    assert.equal(first.code, 0, first.stderr);
    const project = await mkdtemp(join(tmpdir(), 'dm-oci-update-'));
    await writeFile(join(project, 'config.yaml'), `resources:\n- name: cache\n  type: ${repo}:v1.0\n`);
    const installed = await runDm(['install', '--plain-http'], { env, cwd: project });
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(await readFile(join(project, 'dm.lock'), 'utf8'), /version: v1\.0\.1/);
    for (const v of ['v1.0.3', 'v1.1']) {
      const r = await runDm(['push', join(fixtures, 'redis', v), repo, '--plain-http'], { env });
      assert.equal(r.code, 0, r.stderr);
    }
    const outdated = await runDm(['outdated', '--plain-http', '-o', 'json'], { env, cwd: project });
    assert.equal(outdated.code, 1, outdated.stderr);
    assert.deepEqual(JSON.parse(outdated.stdout), [
      { reference: `${repo}:v1.0`, locked: 'v1.0.1', wanted: 'v1.0.3', latest: 'v1.1' },
    ]);
    const updated = await runDm(['update', '--plain-http'], { env, cwd: project });
    assert.equal(updated.code, 0, updated.stderr);
    const lock = await readFile(join(project, 'dm.lock'), 'utf8');
    assert.match(lock, /version: v1\.0\.3/);
    assert.match(lock, /manifest: "sha256:[0-9a-f]{64}"/);
  });

  it("an oci:// reference in a configuration's imports is found and locked like a type", async () => {
    const env = await isolatedEnv();
    const pushed = await runDm(['push', redis, `${base}/imported`, '--plain-http', '-o', 'json'], { env });
    assert.equal(pushed.code, 0, pushed.stderr);
    const project = await mkdtemp(join(tmpdir(), 'dm-oci-imports-'));
    await writeFile(
      join(project, 'config.yaml'),
      `imports:\n- path: ${base}/imported:v1.0\n  name: cache.jinja\nresources:\n- name: cache\n  type: cache.jinja\n`,
    );
    const installed = await runDm(['install', '--plain-http', '--no-expand'], { env, cwd: project });
    assert.equal(installed.code, 0, installed.stderr);
    const lock = await readFile(join(project, 'dm.lock'), 'utf8');
    assert.ok(lock.includes(`"${base}/imported:v1.0":`), lock);
    assert.ok(lock.includes(`manifest: "${JSON.parse(pushed.stdout).manifest}"`), lock);
  });

  it('a manifest of another artifact type is refused with what it is', async () => {
    const env = await isolatedEnv();
    const config = Buffer.from('{}');
    const digest = `sha256:${execFileSync('sha256sum', { input: config }).toString().split(' ')[0]}`;
    const start = await fetch(`http://${registry.host}/v2/acme/templates/other/blobs/uploads/`, {
      method: 'POST',
    });
    assert.equal(start.status, 202);
    const location = new URL(start.headers.get('location')!, `http://${registry.host}`);
    location.searchParams.set('digest', digest);
    const put = await fetch(location, {
      method: 'PUT',
      body: config,
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(put.status, 201);
    const manifest = {
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.cncf.helm.config.v1+json', digest, size: config.length },
      layers: [],
    };
    const m = await fetch(`http://${registry.host}/v2/acme/templates/other/manifests/v1.0.0`, {
      method: 'PUT',
      body: JSON.stringify(manifest),
      headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
    });
    assert.equal(m.status, 201);
    const r = await runDm(['pull', `${base}/other:v1.0`, '--plain-http'], { env });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /other:v1\.0\.0 is not a dm template artifact: its config is application\/vnd\.cncf\.helm\.config\.v1\+json/,
    );
  });

  it('without --plain-http a plain-HTTP registry is unreachable over TLS, and the hint says --plain-http', async () => {
    const env = await isolatedEnv();
    const r = await runDm(['resolve', `${base}/redis:v1.0`], { env });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /cannot reach the OCI registry 127\.0\.0\.1:\d+/);
    assert.match(r.stderr, /--plain-http/);
  });

  it('references: an uppercase repository component and a digest reference are refused in one sentence', async () => {
    const env = await isolatedEnv();
    const upper = await runDm(['resolve', `oci://${registry.host}/acme/templates/Redis:v1`, '--plain-http'], {
      env,
    });
    assert.equal(upper.code, 1, upper.stderr);
    assert.match(upper.stderr, /'Redis' is not an OCI repository name component/);
    const digest = await runDm(
      ['resolve', `oci://${registry.host}/acme/templates/redis@sha256:${'a'.repeat(64)}`],
      { env },
    );
    assert.equal(digest.code, 1, digest.stderr);
    assert.match(digest.stderr, /a reference by digest is not taken/);
  });
});

describe('dm push / pull with basic authentication (docker-registry with htpasswd)', () => {
  let registry: OciRegistry;
  before(async () => {
    registry = await startOciRegistry({ users: { ci: 's3cret' } });
  });
  after(() => registry.stop());

  async function authFile(user: string, password: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'dm-oci-auth-'));
    const file = join(dir, 'auth.json');
    const auth = Buffer.from(`${user}:${password}`).toString('base64');
    await writeFile(file, JSON.stringify({ auths: { [registry.host]: { auth } } }));
    return file;
  }

  it('without credentials: one sentence saying none are configured, and how to log in', async () => {
    const env = await isolatedEnv();
    const r = await runDm(['push', redis, `oci://${registry.host}/acme/templates/redis`, '--plain-http'], {
      env,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /needs credentials for .* and none are configured for it/);
    assert.match(r.stderr, /podman login/);
  });

  it("with REGISTRY_AUTH_FILE (podman's format) it pushes and pulls; skopeo with the same file reads it", async () => {
    const env = { ...(await isolatedEnv()), REGISTRY_AUTH_FILE: await authFile('ci', 's3cret') };
    const r = await runDm(['push', redis, `oci://${registry.host}/acme/templates/redis`, '--plain-http'], {
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    const pulled = await runDm(
      ['pull', `oci://${registry.host}/acme/templates/redis:v1.0`, '--plain-http', '-o', 'json'],
      {
        env,
      },
    );
    assert.equal(pulled.code, 0, pulled.stderr);
    assert.equal(JSON.parse(pulled.stdout).version, 'v1.0.3');
    const { manifest } = skopeoRaw(`${registry.host}/acme/templates/redis:v1.0.3`, [
      '--authfile',
      env.REGISTRY_AUTH_FILE,
    ]);
    assert.equal(manifest.artifactType, 'application/vnd.dm.template.v1');
  });

  it("docker's ~/.docker/config.json is read too; a wrong password is refused naming the user and file", async () => {
    const env = await isolatedEnv();
    const wrong = await authFile('ci', 'nope');
    const dockerDir = join(env.HOME!, '.docker');
    await cp(wrong, join(dockerDir, 'config.json'), { recursive: true });
    const r = await runDm(['pull', `oci://${registry.host}/acme/templates/redis:v1.0`, '--plain-http'], {
      env,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /refused the credentials for ci \(from .*\.docker\/config\.json\)/);
  });
});

/**
 * The token flow (`WWW-Authenticate: Bearer realm=…,service=…,scope=…`) against docker-registry's
 * own token authentication. The token service is a stand-in written to the distribution project's
 * token specification: it checks basic credentials and answers a JWT signed (RS256) with a key
 * whose certificate the registry trusts (x5c header), granting exactly the actions asked for in
 * `scope`; the registry verifies it as it would a real one's.
 */
describe('dm push / pull through the bearer token flow (docker-registry with token auth)', () => {
  let registry: OciRegistry;
  let tokenServer: import('node:http').Server;
  const scopes: string[] = [];
  before(async () => {
    const { createServer } = await import('node:http');
    const { createSign, randomUUID, X509Certificate } = await import('node:crypto');
    const dir = await mkdtemp(join(tmpdir(), 'dm-oci-token-'));
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '1',
        '-subj',
        '/CN=dm-test-token',
      ],
      { stdio: 'pipe' },
    );
    const key = await readFile(keyFile, 'utf8');
    const der = new X509Certificate(await readFile(certFile)).raw.toString('base64');
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    tokenServer = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://token');
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
      const [user, password] = basic ? Buffer.from(basic[1]!, 'base64').toString().split(':') : [];
      if (user !== 'ci' || password !== 's3cret') {
        res.writeHead(401).end('{"details":"bad credentials"}');
        return;
      }
      const scope = url.searchParams.get('scope') ?? '';
      scopes.push(scope);
      const [type, name, actions] = scope.split(':');
      const now = Math.floor(Date.now() / 1000);
      const header = b64({ alg: 'RS256', typ: 'JWT', x5c: [der] });
      const claims = b64({
        iss: 'dm-test-issuer',
        sub: user,
        aud: url.searchParams.get('service'),
        exp: now + 600,
        nbf: now - 60,
        iat: now,
        jti: randomUUID(),
        access: type === 'repository' ? [{ type, name, actions: (actions ?? '').split(',') }] : [],
      });
      const signature = createSign('RSA-SHA256').update(`${header}.${claims}`).sign(key, 'base64url');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ token: `${header}.${claims}.${signature}` }));
    });
    await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
    const address = tokenServer.address() as import('node:net').AddressInfo;
    registry = await startOciRegistry({
      token: {
        realm: `http://127.0.0.1:${address.port}/token`,
        service: 'dm-test-registry',
        issuer: 'dm-test-issuer',
        certFile,
      },
    });
  });
  after(() => {
    registry.stop();
    tokenServer.close();
  });

  it('asks the realm for a token of the right scope with the basic credentials, then pushes and pulls', async () => {
    const auth = Buffer.from('ci:s3cret').toString('base64');
    const dir = await mkdtemp(join(tmpdir(), 'dm-oci-auth-'));
    const file = join(dir, 'auth.json');
    await writeFile(file, JSON.stringify({ auths: { [registry.host]: { auth } } }));
    const env = { ...(await isolatedEnv()), REGISTRY_AUTH_FILE: file };
    const pushed = await runDm(
      ['push', redis, `oci://${registry.host}/acme/templates/redis`, '--plain-http', '-o', 'json'],
      { env },
    );
    assert.equal(pushed.code, 0, pushed.stderr);
    // docker-registry's challenge lists the actions in no fixed order (`pull,push` or `push,pull`).
    assert.ok(
      scopes.some((s) => /^repository:acme\/templates\/redis:(pull,push|push,pull)$/.test(s)),
      scopes.join(' '),
    );
    const pulled = await runDm(
      ['pull', `oci://${registry.host}/acme/templates/redis:v1.0`, '--plain-http', '-o', 'json'],
      { env },
    );
    assert.equal(pulled.code, 0, pulled.stderr);
    assert.equal(JSON.parse(pulled.stdout).digest, JSON.parse(pushed.stdout).digest);
    assert.ok(scopes.includes('repository:acme/templates/redis:pull'), scopes.join(' '));
  });

  it('a token service refusing the credentials: one sentence naming the user and file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-oci-auth-'));
    const file = join(dir, 'auth.json');
    await writeFile(
      file,
      JSON.stringify({ auths: { [registry.host]: { auth: Buffer.from('ci:wrong').toString('base64') } } }),
    );
    const env = { ...(await isolatedEnv()), REGISTRY_AUTH_FILE: file };
    const r = await runDm(['pull', `oci://${registry.host}/acme/templates/redis:v1.0`, '--plain-http'], {
      env,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /refused the credentials for ci \(from .*auth\.json\)/);
    const none = await runDm(['pull', `oci://${registry.host}/acme/templates/redis:v1.0`, '--plain-http'], {
      env: await isolatedEnv(),
    });
    assert.equal(none.code, 1, none.stderr);
  });
});
