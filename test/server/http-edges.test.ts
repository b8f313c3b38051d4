/**
 * What a real dm-registry answers at the edges of HTTP (docs/server.md "Errors"): a wrong method on
 * a path it serves is 405 with Allow; a browser on a path nothing serves gets an HTML 404 (an API
 * client JSON); a 100 KB query is 431 with the JSON error body. Real process, real sockets.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { repoRoot } from '../support/run-cli.js';

/** One raw request (fetch refuses some of these); the status, headers and body. */
function raw(
  url: string,
  method: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HTTP edges of a real server', () => {
  let registry: RunningRegistry;
  before(async () => {
    registry = await startRegistry([
      `${join(repoRoot, 'registry-fixtures')}=github.com/dm-samples/templates`,
    ]);
  });
  after(() => registry.stop());

  it('a wrong method is 405 with Allow, for the API and the pages', async () => {
    const api = await raw(`${registry.url}/api/v1/search?q=redis`, 'DELETE');
    assert.equal(api.status, 405, api.body);
    assert.equal(api.headers.allow, 'GET, HEAD');
    assert.equal((JSON.parse(api.body) as { error: { code: string } }).error.code, 'METHOD_NOT_ALLOWED');
    const page = await raw(`${registry.url}/templates/github.com/dm-samples/templates/redis`, 'PUT');
    assert.equal(page.status, 405, page.body);
    assert.match(String(page.headers.allow), /GET/);
  });

  it('a browser on an unknown path gets an HTML 404; an API client JSON', async () => {
    const browser = await raw(`${registry.url}/no/such/page`, 'GET', { accept: 'text/html,*/*;q=0.8' });
    assert.equal(browser.status, 404);
    assert.match(String(browser.headers['content-type']), /^text\/html/);
    assert.match(browser.body, /<h1>Not found<\/h1>/);
    const client = await raw(`${registry.url}/no/such/page`, 'GET', { accept: 'application/json' });
    assert.equal(client.status, 404);
    assert.equal((JSON.parse(client.body) as { error: { code: string } }).error.code, 'NOT_FOUND');
  });

  it('a 100 KB query is 431 with a JSON body saying why', async () => {
    const res = await raw(`${registry.url}/api/v1/search?q=${'x'.repeat(100_000)}`, 'GET');
    assert.equal(res.status, 431);
    const error = (JSON.parse(res.body) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'HEADERS_TOO_LARGE');
    assert.match(error.message, /larger than the \d+ KB this server reads/);
  });
});
