import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DmError, exitCodeFor } from '../error.js';
import { registryFailure, registryJson, registryUnreachable } from './registry-answer.js';

const BASE = 'http://example.test:8080';
const html = (status: number) =>
  new Response('<!doctype html><p>hello</p>', {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8' },
  });

async function rejection(promise: Promise<unknown>): Promise<DmError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DmError, String(error));
    return error;
  }
  assert.fail('expected a DmError');
}

describe('registry answers', () => {
  it('an HTML page is "not a dm registry server" (exit 5), naming the URL and what it answered', async () => {
    const e = await rejection(registryJson(html(200), BASE));
    assert.equal(e.code, 'NOT_A_REGISTRY_SERVER');
    assert.equal(e.message, `${BASE} is not a dm registry server (it answered text/html)`);
    assert.equal(exitCodeFor(e), 5);
    const failed = await registryFailure(html(404), BASE, 'resolve');
    assert.equal(failed.code, 'NOT_A_REGISTRY_SERVER');
    assert.match(failed.message, /answered text\/html with HTTP 404/);
  });

  it("a gateway's 5xx page is the server being down, and a JSON error keeps its code", async () => {
    assert.equal((await registryFailure(html(502), BASE, 'resolve')).code, 'REMOTE_ERROR');
    const json = new Response(JSON.stringify({ error: { code: 'VERSION_NOT_FOUND', message: 'no v9' } }), {
      status: 404,
      headers: { 'content-type': 'application/json' },
    });
    const e = await registryFailure(json, BASE, 'resolve');
    assert.deepEqual([e.code, e.message, exitCodeFor(e)], ['VERSION_NOT_FOUND', 'resolve: no v9', 3]);
    const ok = new Response('{"results":[]}', { headers: { 'content-type': 'application/json' } });
    assert.deepEqual(await registryJson(ok, BASE), { results: [] });
  });

  it('a DNS failure is said in plain words', () => {
    const cause = Object.assign(new Error('getaddrinfo ENOTFOUND nosuch.invalid'), {
      code: 'ENOTFOUND',
      hostname: 'nosuch.invalid',
    });
    const e = registryUnreachable(BASE, Object.assign(new TypeError('fetch failed'), { cause }));
    assert.equal(e.code, 'REGISTRY_UNREACHABLE');
    assert.equal(
      e.message,
      `cannot reach the registry server at ${BASE}: the host name does not resolve (ENOTFOUND)`,
    );
    assert.equal(exitCodeFor(e), 5);
  });
});
