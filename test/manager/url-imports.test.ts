/**
 * Issue 27: the manager API expands configurations too, and an import by URL there must not make
 * the server fetch an address a request names (docs/expansion.md "Imports by URL"): it is refused,
 * 400 URL_IMPORT_REFUSED naming the import and the file, and the address is never contacted.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { startManagerServer } from './fixtures.js';

describe('manager: imports by URL are refused, never fetched', () => {
  it('in the configuration and in a schema: 400 URL_IMPORT_REFUSED unless the file is sent by name; no request made', async () => {
    const asked: string[] = [];
    const target = createServer((req, res) => {
      asked.push(req.url ?? '');
      res.end('resources: []\n');
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/lb-l3.jinja`;
    const server = await startManagerServer('dm-manager-url-');
    try {
      const expand = async (configuration: unknown) => {
        const res = await server.expand(configuration);
        return {
          status: res.status,
          body: JSON.parse(res.text) as { error?: { code: string; message: string } },
        };
      };
      const inConfiguration = await expand({
        content: `imports:\n- path: ${url}\n  name: lb.jinja\nresources:\n- name: a\n  type: lb.jinja\n`,
        imports: [],
      });
      assert.equal(inConfiguration.status, 400, JSON.stringify(inConfiguration.body));
      assert.equal(inConfiguration.body.error?.code, 'URL_IMPORT_REFUSED');
      assert.equal(
        inConfiguration.body.error?.message,
        `config.yaml: import '${url}' (as 'lb.jinja'): the Deployment Manager does not fetch imports by URL (it makes no request to an address a configuration names); send the file among the imports, under that name`,
      );
      const inSchema = await expand({
        content: 'imports:\n- path: svc.jinja\nresources:\n- name: a\n  type: svc.jinja\n',
        imports: [
          { name: 'svc.jinja', content: 'resources:\n- name: lb\n  type: lb.jinja\n' },
          { name: 'svc.jinja.schema', content: `imports:\n- path: ${url}\n  name: lb.jinja\n` },
        ],
      });
      assert.equal(inSchema.status, 400, JSON.stringify(inSchema.body));
      assert.equal(inSchema.body.error?.code, 'URL_IMPORT_REFUSED');
      assert.match(
        inSchema.body.error?.message ?? '',
        /^svc\.jinja\.schema: import '[^']+' \(as 'lb\.jinja'\): the Deployment Manager does not fetch/,
      );
      // As gcloud sent it: the import list names the URL, and the file comes under its name.
      const sent = await expand({
        content: `imports:\n- path: ${url}\n  name: lb.jinja\nresources:\n- name: a\n  type: lb.jinja\n`,
        imports: [
          { name: 'lb.jinja', content: 'resources:\n- name: {{ env["name"] }}-cm\n  type: ConfigMap\n' },
        ],
      });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      assert.deepEqual(asked, [], 'the server made no request to the address');
    } finally {
      await server.close();
      await new Promise<void>((r) => target.close(() => r()));
    }
  });
});
