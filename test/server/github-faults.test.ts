/**
 * Issue 25 item 13 (docs/errors.md, docs/server.md "Indexing"): a GitHub registry's sync when
 * GitHub misbehaves, through the server's app (`POST /api/v1/registries/{id}/sync`, which answers
 * the outcome), with the GitHub stand-in behind the fault-injecting proxy. A request GitHub does
 * not begin to answer in time fails the sync with `UPSTREAM_TIMEOUT` (once: not retried into four
 * deadlines); an error status (400, 500) with `SOURCE_UNREACHABLE`, category upstream; garbage
 * (malformed JSON, a page, a tree or tarball that is none) with `UPSTREAM_INVALID_ANSWER`; each one
 * sentence naming GitHub and the repository, never GitHub's own text. The store is not involved
 * beyond the sync record, so SQLite only.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { httpStatusOfCategory } from '../../client/src/error.js';
import { categoriesOf, type ErrorCode } from '../../client/src/error-codes.js';
import { defaultSourceFactory } from '../../server/src/service.js';
import { commitDirectory, type Standin, startGitHubStandin } from '../github-standin/standin.js';
import { type FaultMode, type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { ADMIN_TOKEN, FIXTURES, tempDir, testServerOn } from './helpers.js';

const TIMEOUT_MS = 1500;
const COMMITS = '/repos/acme/templates/commits';
const TREES = '/repos/acme/templates/git/trees';

interface Case {
  name: string;
  fault: FaultMode;
  code: string;
  /** The category the code is given here, so what it would answer over HTTP. */
  status: number;
  message: RegExp;
}

const CASES: readonly Case[] = [
  {
    name: 'the branch request hangs',
    fault: { mode: 'hang', only: COMMITS },
    code: 'UPSTREAM_TIMEOUT',
    status: 504,
    message: /^GitHub did not answer for branch HEAD of acme\/templates within 1\.5 s$/,
  },
  {
    name: 'the branch request is answered 400',
    fault: { mode: 'status', status: 400, only: COMMITS },
    code: 'SOURCE_UNREACHABLE',
    status: 502,
    message: /^GitHub answered HTTP 400 for branch HEAD of acme\/templates$/,
  },
  {
    name: 'the branch request is answered 500',
    fault: { mode: 'status', status: 500, only: COMMITS },
    code: 'SOURCE_UNREACHABLE',
    status: 502,
    message: /^GitHub answered HTTP 500 for branch HEAD of acme\/templates$/,
  },
  {
    name: 'the branch request is answered with malformed JSON',
    fault: { mode: 'malformed', only: COMMITS },
    code: 'UPSTREAM_INVALID_ANSWER',
    status: 502,
    message: /^GitHub answered something dm cannot use for branch HEAD of acme\/templates$/,
  },
  {
    name: 'the branch request is answered with a page',
    fault: { mode: 'html', only: COMMITS },
    code: 'UPSTREAM_INVALID_ANSWER',
    status: 502,
    message: /^GitHub answered something dm cannot use for branch HEAD of acme\/templates$/,
  },
  {
    name: 'the tree is malformed',
    fault: { mode: 'malformed', only: TREES },
    code: 'UPSTREAM_INVALID_ANSWER',
    status: 502,
    message: /^GitHub answered something dm cannot use for tree of acme\/templates$/,
  },
  {
    name: 'the tarball is no archive',
    fault: { mode: 'malformed', only: '/repos/acme/templates/tarball' },
    code: 'UPSTREAM_INVALID_ANSWER',
    status: 502,
    message: /^GitHub answered something dm cannot use for tarball of acme\/templates$/,
  },
];

describe('a GitHub registry whose GitHub fails', () => {
  let standin: Standin;
  let proxy: FaultProxy;

  before(async () => {
    const dir = tempDir();
    const repo = join(dir, 'templates');
    commitDirectory(FIXTURES, repo);
    standin = await startGitHubStandin({ repos: { 'acme/templates': { gitDir: repo } } });
    proxy = await startFaultProxy(standin.url);
  });
  after(async () => {
    await proxy?.close();
    await standin?.close();
  });

  /** A server whose GitHub is the stand-in behind the proxy, with the short request deadline. */
  const server = () =>
    testServerOn('sqlite', {
      sources: defaultSourceFactory({
        githubApiUrl: proxy.url,
        gitCacheDir: join(tempDir(), 'git'),
        githubTimeoutMs: TIMEOUT_MS,
      }),
    });

  for (const c of CASES) {
    it(`${c.name}: the sync fails with ${c.code} (${c.status}), one sentence naming GitHub`, async () => {
      const s = await server();
      try {
        const row = await s.service.add({ source: 'github.com/acme/templates' });
        proxy.set(c.fault);
        proxy.reset();
        const res = await s.app.request(`/api/v1/registries/${row.id}/sync`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        proxy.set({ mode: 'pass' });
        const text = await res.text();
        assert.equal(res.status, 200, text);
        const outcome = JSON.parse(text) as { status: string; error?: { code: string; message: string } };
        assert.equal(outcome.status, 'failed', text);
        assert.equal(outcome.error?.code, c.code, text);
        assert.match(outcome.error?.message ?? '', c.message);
        assert.doesNotMatch(text, /injected|captive portal| {4}at /);
        assert.ok(categoriesOf(c.code as ErrorCode).some((k) => httpStatusOfCategory(k) === c.status));
        if (c.fault.mode === 'hang') {
          assert.equal(proxy.seen.filter((l) => l.includes(COMMITS)).length, 1, proxy.seen.join('\n'));
        }
      } finally {
        proxy.set({ mode: 'pass' });
        await s.close();
      }
    });
  }

  it('a GitHub that answers indexes as usual through the same proxy', async () => {
    const s = await server();
    try {
      proxy.set({ mode: 'pass' });
      const row = await s.service.add({ source: 'github.com/acme/templates' });
      const outcome = await s.service.sync(row.id, 'manual');
      assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome.error));
    } finally {
      await s.close();
    }
  });
});
