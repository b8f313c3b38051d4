/**
 * The stand-in cannot drift from GitHub: every body it serves for the endpoints dm-registry uses
 * is validated against GitHub's own OpenAPI description (@octokit/openapi), and its protocol
 * behaviour (ETag/304, truncation, redirects, rate limits, private repositories) is checked.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { commitDirectory, type Standin, startGitHubStandin } from './standin.js';

const require = createRequire(import.meta.url);
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;

interface OpenApiResponse {
  $ref?: string;
  content?: Record<string, { schema: unknown }>;
}

interface OpenApi {
  paths: Record<string, { get: { responses: Record<string, OpenApiResponse> } }>;
  components: { schemas: Record<string, unknown>; responses: Record<string, OpenApiResponse> };
}

/** OpenAPI 3.0's `nullable: true` as JSON Schema (`type: [t, 'null']`, or `anyOf` with null). */
function jsonSchemaOf(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(jsonSchemaOf);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) if (k !== 'nullable') out[k] = jsonSchemaOf(v);
  if ((node as { nullable?: unknown }).nullable !== true) return out;
  if (typeof out.type === 'string')
    return {
      ...out,
      type: [out.type, 'null'],
      ...(out.enum ? { enum: [...(out.enum as unknown[]), null] } : {}),
    };
  return { anyOf: [out, { type: 'null' }] };
}

function loadValidator() {
  const file = require.resolve('@octokit/openapi/generated/api.github.com.json');
  const doc = JSON.parse(readFileSync(file, 'utf8')) as OpenApi;
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'github', components: { schemas: jsonSchemaOf(doc.components.schemas) } });
  /** Validates `body` against the schema GitHub documents for `path`'s GET answer with `status`. */
  return (path: string, status: string, body: unknown): string[] => {
    let response = doc.paths[path]?.get.responses[status];
    assert.ok(response, `GitHub documents no ${status} answer for GET ${path}`);
    if (response.$ref) response = doc.components.responses[response.$ref.split('/').at(-1)!];
    assert.ok(response, `GitHub's ${status} answer for GET ${path} is a dangling reference`);
    const schema = response.content?.['application/json']?.schema as { $ref?: string } | undefined;
    assert.ok(schema, `no JSON schema for GET ${path} ${status}`);
    const ref = schema.$ref ? `github${schema.$ref}` : undefined;
    const validate = ref
      ? (ajv.getSchema(ref) ?? ajv.compile({ $ref: ref }))
      : ajv.compile(jsonSchemaOf(schema) as object);
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  };
}

describe('GitHub stand-in', () => {
  let dir: string;
  let standin: Standin;
  let commit: string;
  let validate: ReturnType<typeof loadValidator>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'standin-'));
    commit = commitDirectory(join(process.cwd(), 'registry-fixtures'), join(dir, 'repo'));
    commitDirectory(join(process.cwd(), 'registry-fixtures', 'redis'), join(dir, 'private'));
    standin = await startGitHubStandin({
      repos: {
        'acme/templates': { gitDir: join(dir, 'repo') },
        'acme/secret': { gitDir: join(dir, 'private'), private: true },
      },
      tokens: ['good-token'],
      maxTreeEntries: 50,
    });
    validate = loadValidator();
  });
  after(async () => {
    await standin.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${standin.url}${path}`, { headers, redirect: 'manual' });

  it('serves a repository as GitHub documents it', async () => {
    const res = await get('/repos/acme/templates');
    assert.equal(res.status, 200);
    assert.deepEqual(validate('/repos/{owner}/{repo}', '200', await res.json()), []);
  });

  it('the OpenAPI check rejects a body GitHub would not send', async () => {
    const body = (await (await get('/repos/acme/templates/commits/HEAD')).json()) as Record<string, unknown>;
    delete body.sha;
    assert.notDeepEqual(validate('/repos/{owner}/{repo}/commits/{ref}', '200', body), []);
  });

  it('serves a branch as GitHub documents it', async () => {
    const res = await get('/repos/acme/templates/branches/main');
    assert.equal(res.status, 200);
    assert.deepEqual(validate('/repos/{owner}/{repo}/branches/{branch}', '200', await res.json()), []);
  });

  it('serves a commit with an ETag and answers 304 to it without using the rate limit', async () => {
    const res = await get('/repos/acme/templates/commits/HEAD');
    assert.equal(res.status, 200);
    const body = (await res.json()) as { sha: string };
    assert.equal(body.sha, commit);
    assert.deepEqual(validate('/repos/{owner}/{repo}/commits/{ref}', '200', body), []);
    const etag = res.headers.get('etag')!;
    const before = standin.remaining();
    const again = await get('/repos/acme/templates/commits/HEAD', { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(standin.remaining(), before);
  });

  it('serves recursive trees, truncated past the configured size, as GitHub documents them', async () => {
    const c = (await (await get('/repos/acme/templates/commits/main')).json()) as {
      commit: { tree: { sha: string } };
    };
    const res = await get(`/repos/acme/templates/git/trees/${c.commit.tree.sha}?recursive=1`);
    const body = (await res.json()) as { truncated: boolean; tree: unknown[] };
    assert.equal(body.truncated, true);
    assert.equal(body.tree.length, 50);
    assert.deepEqual(validate('/repos/{owner}/{repo}/git/trees/{tree_sha}', '200', body), []);
    const flat = (await (await get(`/repos/acme/templates/git/trees/${c.commit.tree.sha}`)).json()) as {
      truncated: boolean;
    };
    assert.equal(flat.truncated, false);
  });

  it('serves blobs as GitHub documents them', async () => {
    const c = (await (await get('/repos/acme/templates/commits/main')).json()) as {
      commit: { tree: { sha: string } };
    };
    const tree = (await (await get(`/repos/acme/templates/git/trees/${c.commit.tree.sha}`)).json()) as {
      tree: { type: string; sha: string; path: string }[];
    };
    const blob = tree.tree.find((t) => t.path === 'registry.yaml')!;
    const body = (await (await get(`/repos/acme/templates/git/blobs/${blob.sha}`)).json()) as {
      content: string;
    };
    assert.deepEqual(validate('/repos/{owner}/{repo}/git/blobs/{file_sha}', '200', body), []);
    assert.equal(
      Buffer.from(body.content, 'base64').toString('utf8'),
      readFileSync(join(process.cwd(), 'registry-fixtures', 'registry.yaml'), 'utf8'),
    );
  });

  it('redirects a tarball to the download host, which serves a gzip archive', async () => {
    const res = await get('/repos/acme/templates/tarball/main');
    assert.equal(res.status, 302);
    const location = res.headers.get('location')!;
    const archive = await fetch(location);
    assert.equal(archive.status, 200);
    const bytes = Buffer.from(await archive.arrayBuffer());
    assert.equal(bytes[0], 0x1f);
    assert.equal(bytes[1], 0x8b);
  });

  it('answers 404 as GitHub documents it, also for a private repository without a token', async () => {
    for (const path of ['/repos/acme/nothing', '/repos/acme/secret/commits/HEAD']) {
      const res = await get(path);
      assert.equal(res.status, 404);
      assert.deepEqual(validate('/repos/{owner}/{repo}', '404', await res.json()), []);
    }
    const ok = await get('/repos/acme/secret/commits/HEAD', { authorization: 'token good-token' });
    assert.equal(ok.status, 200);
    const bad = await get('/repos/acme/secret/commits/HEAD', { authorization: 'token bad-token' });
    assert.equal(bad.status, 401);
  });

  it('sends rate-limit headers, and 403 or 429 rate-limit answers when told to', async () => {
    const res = await get('/repos/acme/templates');
    assert.match(res.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/);
    assert.match(res.headers.get('x-ratelimit-reset') ?? '', /^\d+$/);
    standin.injectRateLimit('primary');
    const primary = await get('/repos/acme/templates');
    assert.equal(primary.status, 403);
    assert.equal(primary.headers.get('x-ratelimit-remaining'), '0');
    assert.deepEqual(validate('/repos/{owner}/{repo}', '403', await primary.json()), []);
    standin.injectRateLimit('secondary', 1, 2);
    const secondary = await get('/repos/acme/templates');
    assert.equal(secondary.status, 429);
    assert.equal(secondary.headers.get('retry-after'), '2');
    assert.match(((await secondary.json()) as { message: string }).message, /secondary rate limit/);
  });
});
