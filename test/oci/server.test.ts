/**
 * dm-registry's /v2/ (docs/oci.md "dm-registry as an OCI registry"), checked against the OCI
 * distribution specification's pull requirements on both databases, and read by skopeo (Debian's)
 * from a real dm-registry process: `skopeo inspect --raw` and `skopeo copy` to an `oci:` layout.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readTarball } from '../../client/src/source/tarball.js';
import { admin, DIALECTS, type DialectTestServer, FIXTURES, testServerOn } from '../server/helpers.js';
import { type OciRegistry, startOciRegistry } from '../support/oci-registry.js';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

const sha256 = (data: Uint8Array | string) => `sha256:${createHash('sha256').update(data).digest('hex')}`;
const PUBLIC = 'dm/github.com/acme/public/redis';
const PRIVATE = 'dm/github.com/acme/private/redis';

for (const dialect of DIALECTS) {
  describe(`dm-registry /v2/ against the distribution spec's pull rules (${dialect})`, () => {
    let s: DialectTestServer;
    let reader: string;
    before(async () => {
      s = await testServerOn(dialect);
      const pub = await s.service.add({ source: FIXTURES, name: 'github.com/acme/public' });
      const priv = await s.service.add({
        source: FIXTURES,
        name: 'github.com/acme/private',
        visibility: 'private',
      });
      await s.service.sync(pub.id, 'manual');
      await s.service.sync(priv.id, 'manual');
      reader = await s.service.createToken({ admin: false, registry: 'github.com/acme/private' });
    });
    after(() => s.close());

    const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
      s.app.request(path, { method, headers });

    it('GET /v2/ (end-1): 401 with a Basic challenge without credentials, 200 with a valid token', async () => {
      const anonymous = await get('/v2/');
      assert.equal(anonymous.status, 401);
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Basic realm=/);
      assert.equal((await get('/v2/', admin)).status, 200);
      const bad = await get('/v2/', { authorization: `Basic ${Buffer.from('x:nope').toString('base64')}` });
      assert.equal(bad.status, 401);
      assert.equal(((await bad.json()) as { errors: { code: string }[] }).errors[0]!.code, 'UNAUTHORIZED');
    });

    it('tags list (end-8a/8b): lexical order, n limits with a Link to the next page, last continues after', async () => {
      const all = await get(`/v2/${PUBLIC}/tags/list`);
      assert.equal(all.status, 200);
      const body = (await all.json()) as { name: string; tags: string[] };
      assert.equal(body.name, PUBLIC);
      assert.deepEqual(body.tags, ['v1', 'v1.0.1', 'v1.0.3', 'v1.1', 'v2.0.0-rc.1']);
      assert.deepEqual([...body.tags].sort(), body.tags);

      const first = await get(`/v2/${PUBLIC}/tags/list?n=2`);
      assert.deepEqual(((await first.json()) as { tags: string[] }).tags, ['v1', 'v1.0.1']);
      const link = /<([^>]+)>;\s*rel="next"/.exec(first.headers.get('link') ?? '');
      assert.ok(link, 'a Link header to the next page');
      const second = await get(link[1]!);
      assert.deepEqual(((await second.json()) as { tags: string[] }).tags, ['v1.0.3', 'v1.1']);
      const rest = await get(`/v2/${PUBLIC}/tags/list?last=v1.1`);
      assert.deepEqual(((await rest.json()) as { tags: string[] }).tags, ['v2.0.0-rc.1']);
      assert.equal(rest.headers.get('link'), null);
      const zero = await get(`/v2/${PUBLIC}/tags/list?n=0`);
      assert.deepEqual(((await zero.json()) as { tags: string[] }).tags, []);
    });

    it('manifests (end-3, end-2): by tag and by digest, Docker-Content-Digest of the bytes, HEAD, 304', async () => {
      const byTag = await get(`/v2/${PUBLIC}/manifests/v1.0.3`);
      assert.equal(byTag.status, 200);
      assert.equal(byTag.headers.get('content-type'), 'application/vnd.oci.image.manifest.v1+json');
      const bytes = Buffer.from(await byTag.arrayBuffer());
      const digest = byTag.headers.get('docker-content-digest');
      assert.equal(digest, sha256(bytes));
      assert.equal(byTag.headers.get('etag'), `"${digest}"`);
      const manifest = JSON.parse(bytes.toString()) as {
        artifactType: string;
        config: { digest: string };
        layers: { digest: string }[];
      };
      assert.equal(manifest.artifactType, 'application/vnd.dm.template.v1');

      const byDigest = await get(`/v2/${PUBLIC}/manifests/${digest}`);
      assert.equal(byDigest.status, 200);
      assert.ok(Buffer.from(await byDigest.arrayBuffer()).equals(bytes));
      const head = await get(`/v2/${PUBLIC}/manifests/v1.0.3`, {}, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('docker-content-digest'), digest);
      assert.equal(head.headers.get('content-length'), String(bytes.length));
      assert.equal(
        (await get(`/v2/${PUBLIC}/manifests/v1.0.3`, { 'if-none-match': `"${digest}"` })).status,
        304,
      );

      const missing = await get(`/v2/${PUBLIC}/manifests/v9.9.9`);
      assert.equal(missing.status, 404);
      assert.equal(
        ((await missing.json()) as { errors: { code: string }[] }).errors[0]!.code,
        'MANIFEST_UNKNOWN',
      );

      // The same manifest from the other database's server and from a rebuild: a pure function of the files.
      const again = await get(`/v2/${PUBLIC}/manifests/v1.0.3`);
      assert.equal(again.headers.get('docker-content-digest'), digest);

      // Blobs (end-2): the config and the layer by digest, with their digests; Range on the layer.
      const config = await get(`/v2/${PUBLIC}/blobs/${manifest.config.digest}`);
      assert.equal(config.status, 200);
      assert.equal(sha256(Buffer.from(await config.arrayBuffer())), manifest.config.digest);
      const layer = Buffer.from(
        await (await get(`/v2/${PUBLIC}/blobs/${manifest.layers[0]!.digest}`)).arrayBuffer(),
      );
      assert.equal(sha256(layer), manifest.layers[0]!.digest);
      const part = await get(`/v2/${PUBLIC}/blobs/${manifest.layers[0]!.digest}`, { range: 'bytes=10-19' });
      assert.equal(part.status, 206);
      assert.equal(part.headers.get('content-range'), `bytes 10-19/${layer.length}`);
      assert.ok(Buffer.from(await part.arrayBuffer()).equals(layer.subarray(10, 20)));
      assert.equal(
        (await get(`/v2/${PUBLIC}/blobs/${manifest.layers[0]!.digest}`, { range: `bytes=${layer.length}-` }))
          .status,
        416,
      );

      const { files } = await readTarball(layer);
      for (const name of ['redis.jinja', 'redis.jinja.schema', 'example.yaml', 'helpers/common.jinja']) {
        assert.ok(files.get(name)?.equals(await readFile(join(FIXTURES, 'redis', 'v1.0.3', name))), name);
      }
      // A blob of one repository is not served under another's name.
      const elsewhere = await get(
        `/v2/dm/github.com/acme/public/postgres/blobs/${manifest.layers[0]!.digest}`,
      );
      assert.equal(elsewhere.status, 404);
      assert.equal(
        ((await elsewhere.json()) as { errors: { code: string }[] }).errors[0]!.code,
        'BLOB_UNKNOWN',
      );
    });

    it('a private template is the same NAME_UNKNOWN as a missing one without a token, readable with one', async () => {
      for (const path of ['tags/list', 'manifests/v1.0.3', `referrers/sha256:${'0'.repeat(64)}`]) {
        const hidden = await get(`/v2/${PRIVATE}/${path}`);
        const missing = await get(`/v2/dm/github.com/acme/nothing/redis/${path}`);
        assert.equal(hidden.status, 404, path);
        assert.equal(missing.status, 404, path);
        const a = (await hidden.json()) as { errors: { code: string; message: string }[] };
        const b = (await missing.json()) as { errors: { code: string; message: string }[] };
        assert.equal(a.errors[0]!.code, 'NAME_UNKNOWN');
        assert.equal(
          a.errors[0]!.message.replace('acme/private', 'X'),
          b.errors[0]!.message.replace('acme/nothing', 'X'),
        );
      }
      const basic = `Basic ${Buffer.from(`reader:${reader}`).toString('base64')}`;
      const allowed = await get(`/v2/${PRIVATE}/manifests/v1.0.3`, { authorization: basic });
      assert.equal(allowed.status, 200);
      assert.match(allowed.headers.get('cache-control') ?? '', /^private/);
      const bearer = await get(`/v2/${PRIVATE}/tags/list`, { authorization: `Bearer ${reader}` });
      assert.equal(bearer.status, 200);
    });

    it('referrers (end-12a/12b): always 200 with an image index; artifactType filter is said; bad digest 400', async () => {
      const digest = (await get(`/v2/${PUBLIC}/manifests/v1.0.3`)).headers.get('docker-content-digest')!;
      const r = await get(`/v2/${PUBLIC}/referrers/${digest}`);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'application/vnd.oci.image.index.v1+json');
      assert.deepEqual(await r.json(), {
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.index.v1+json',
        manifests: [],
      });
      const unknown = await get(`/v2/${PUBLIC}/referrers/sha256:${'1'.repeat(64)}`);
      assert.equal(unknown.status, 200, 'never 404 for a digest the registry does not hold');
      const filtered = await get(
        `/v2/${PUBLIC}/referrers/${digest}?artifactType=application/vnd.example.sig`,
      );
      assert.equal(filtered.headers.get('oci-filters-applied'), 'artifactType');
      const bad = await get(`/v2/${PUBLIC}/referrers/not-a-digest`);
      assert.equal(bad.status, 400);
      assert.equal(((await bad.json()) as { errors: { code: string }[] }).errors[0]!.code, 'DIGEST_INVALID');
    });

    it('a version added by a sync is listed and served at once (no stale view of the template)', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'dm-oci-grow-'));
      const version = async (v: string) => {
        await mkdir(join(dir, 'app', v), { recursive: true });
        await writeFile(join(dir, 'app', v, 'app.jinja'), `resources: [] # ${v}\n`);
      };
      await version('v1.0.0');
      const row = await s.service.add({ source: dir, name: 'github.com/acme/growing' });
      await s.service.sync(row.id, 'manual');
      const tags = async () =>
        ((await (await get('/v2/dm/github.com/acme/growing/app/tags/list')).json()) as { tags: string[] })
          .tags;
      assert.deepEqual(await tags(), ['v1.0.0']);
      assert.equal((await get('/v2/dm/github.com/acme/growing/app/manifests/v1.0.0')).status, 200);
      await version('v1.0.1');
      await s.service.sync(row.id, 'manual');
      assert.deepEqual(await tags(), ['v1.0.0', 'v1.0.1']);
      assert.equal((await get('/v2/dm/github.com/acme/growing/app/manifests/v1.0.1')).status, 200);
    });

    it('pushes are refused: 405 UNSUPPORTED', async () => {
      const r = await s.app.request(`/v2/${PUBLIC}/blobs/uploads/`, { method: 'POST' });
      assert.equal(r.status, 405);
      assert.equal(((await r.json()) as { errors: { code: string }[] }).errors[0]!.code, 'UNSUPPORTED');
    });
  });
}

describe('skopeo reads dm-registry /v2/ (a real dm-registry process)', () => {
  let server: RunningRegistry;
  let host: string;
  before(async () => {
    server = await startRegistry([`${FIXTURES}=github.com/dm-samples/templates`], {
      DM_ADMIN_TOKEN: 'oci-admin',
    });
    host = new URL(server.url).host;
  });
  after(() => server.stop());

  it("skopeo inspect --raw shows the manifest; skopeo copy to an oci: layout gives the version's files", async () => {
    const raw = execFileSync(
      'skopeo',
      [
        'inspect',
        '--raw',
        '--tls-verify=false',
        `docker://${host}/dm/github.com/dm-samples/templates/redis:v1.0.3`,
      ],
      { encoding: 'utf8' },
    );
    const manifest = JSON.parse(raw) as { artifactType: string; layers: { digest: string }[] };
    assert.equal(manifest.artifactType, 'application/vnd.dm.template.v1');

    const layout = await mkdtemp(join(tmpdir(), 'dm-oci-layout-'));
    execFileSync(
      'skopeo',
      [
        'copy',
        '--src-tls-verify=false',
        `docker://${host}/dm/github.com/dm-samples/templates/redis:v1.0.3`,
        `oci:${layout}:v1.0.3`,
      ],
      { stdio: 'pipe' },
    );
    const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as {
      manifests: { digest: string }[];
    };
    const copied = JSON.parse(
      await readFile(join(layout, 'blobs', 'sha256', index.manifests[0]!.digest.slice(7)), 'utf8'),
    ) as { layers: { digest: string }[] };
    const layer = await readFile(join(layout, 'blobs', 'sha256', copied.layers[0]!.digest.slice(7)));
    const { files } = await readTarball(layer);
    const names = [...files.keys()].sort();
    assert.deepEqual(names, ['example.yaml', 'helpers/common.jinja', 'redis.jinja', 'redis.jinja.schema']);
    for (const name of names) {
      assert.ok(files.get(name)!.equals(await readFile(join(FIXTURES, 'redis', 'v1.0.3', name))), name);
    }
  });

  it('what dm-registry serves is what dm push makes of the same version (one artifact, one digest)', async () => {
    let registry: OciRegistry | undefined;
    try {
      registry = await startOciRegistry();
      const env = await isolatedEnv();
      const pushed = await runDm(
        [
          'push',
          'github.com/dm-samples/templates/redis:v1.0',
          `oci://${registry.host}/acme/templates/redis`,
          '--registry-url',
          server.url,
          '--plain-http',
          '-o',
          'json',
        ],
        { env, cwd: repoRoot },
      );
      assert.equal(pushed.code, 0, pushed.stderr);
      const served = await fetch(
        `${server.url}/v2/dm/github.com/dm-samples/templates/redis/manifests/v1.0.3`,
      );
      assert.equal(served.headers.get('docker-content-digest'), JSON.parse(pushed.stdout).manifest);
    } finally {
      registry?.stop();
    }
  });

  it('dm search <query> oci://<dm-registry host> asks its search API', async () => {
    const env = await isolatedEnv();
    const r = await runDm(['search', 'redis', `oci://${host}`, '--plain-http', '-o', 'json'], { env });
    assert.equal(r.code, 0, r.stderr);
    const hits = (JSON.parse(r.stdout) as { hits: { reference: string }[] }).hits;
    assert.ok(
      hits.some((h) => h.reference === 'github.com/dm-samples/templates/redis'),
      r.stdout,
    );
  });

  it('skopeo with --creds reads a private template; without, it is not found', async () => {
    const created = await fetch(`${server.url}/api/v1/registries`, {
      method: 'POST',
      headers: { authorization: 'Bearer oci-admin', 'content-type': 'application/json' },
      body: JSON.stringify({ source: FIXTURES, name: 'github.com/acme/secret', visibility: 'private' }),
    });
    assert.ok(created.status === 201 || created.status === 200, `${created.status} ${await created.text()}`);
    // Creating it starts its sync: skopeo is asked until the sync has landed.
    const target = `docker://${host}/dm/github.com/acme/secret/redis:v1.0.3`;
    let manifest = '';
    for (let i = 0; i < 600 && manifest === ''; i++) {
      try {
        manifest = execFileSync(
          'skopeo',
          ['inspect', '--raw', '--tls-verify=false', '--creds', 'ci:oci-admin', target],
          {
            encoding: 'utf8',
            stdio: 'pipe',
          },
        );
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    assert.match(manifest, /application\/vnd\.dm\.template\.v1/);
    assert.throws(
      () =>
        execFileSync('skopeo', ['inspect', '--raw', '--tls-verify=false', target], {
          encoding: 'utf8',
          stdio: 'pipe',
        }),
      (error: Error & { stderr?: string }) =>
        /name unknown|NAME_UNKNOWN|repository name not known/i.test(String(error.stderr)),
    );
  });
});
