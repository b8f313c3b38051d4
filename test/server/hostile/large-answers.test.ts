/**
 * Issue 25 item 2, the API's side: answers about a version at the files bound (1,000 files) stay
 * bounded. A real dm-registry serves such a version: its file list comes a page at a time
 * (`…/files?limit=&continue=`, the pages together equal the resolve answer's list); a batch of 1,000
 * references to it (a 150 MB answer) is sent as the client reads it — a client that read the first
 * bytes and stopped still holds its batch's slot (the answer is not built ahead of the reader), and an
 * unrelated resolve is answered meanwhile; once read, the answer holds every result.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DIALECTS, FIXTURES, tempDir } from '../helpers.js';
import { boundedWork, startRegistry } from './process.js';

const NAME = 'local.dm/acme/bulk';
const REG = 'github.com/dm-samples/templates';
const FILES = 1000;

function bulkRegistry(): string {
  const root = tempDir('dm-large-answers-');
  const dir = join(root, 'bulk', 'v1.0.0');
  mkdirSync(join(dir, 'data'), { recursive: true });
  writeFileSync(join(dir, 'bulk.jinja'), 'resources:\n- name: {{ env["name"] }}\n  type: ConfigMap\n');
  writeFileSync(join(dir, 'example.yaml'), 'resources:\n- name: b\n  type: bulk.jinja\n');
  for (let i = 0; i < FILES - 2; i++) {
    writeFileSync(
      join(dir, 'data', `file-with-a-rather-long-name-${String(i).padStart(4, '0')}.txt`),
      `${i}\n`,
    );
  }
  return root;
}

interface FileList {
  total: number;
  files: { path: string; size: number; sha256: string }[];
  continue?: string;
}

for (const dialect of DIALECTS) {
  describe(`hostile: answers about a version at the files bound (${dialect})`, () => {
    it('file list in pages; a 1,000-reference batch streamed as it is read', async () => {
      const source = bulkRegistry();
      const server = await startRegistry(['--index', FIXTURES, '--index', `${source}=${NAME}`], { dialect });
      try {
        const resolved = await fetch(`${server.url}/api/v1/resolve?ref=${NAME}/bulk:v1`);
        assert.equal(resolved.status, 200);
        const resolution = (await resolved.json()) as { files: FileList['files'] };
        assert.equal(resolution.files.length, FILES);

        // The file list a page at a time, in path order.
        const base = `${server.url}/api/v1/templates/${NAME}/bulk/versions/v1.0.0/files`;
        const pages: FileList[] = [];
        let next: string | undefined = '';
        while (next !== undefined) {
          const res = await fetch(`${base}?limit=400${next ? `&continue=${next}` : ''}`);
          assert.equal(res.status, 200);
          const page = (await res.json()) as FileList;
          assert.equal(page.total, FILES);
          pages.push(page);
          next = page.continue;
        }
        assert.deepEqual(
          pages.map((p) => p.files.length),
          [400, 400, 200],
        );
        const listed = pages.flatMap((p) => p.files);
        const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : 1);
        assert.deepEqual(listed, [...resolution.files].sort(byPath));
        const defaultPage = (await (await fetch(base)).json()) as FileList;
        assert.equal(defaultPage.files.length, 100);
        for (const bad of ['?limit=0', '?limit=1001', '?continue=%21%21']) {
          const res = await fetch(`${base}${bad}`);
          assert.equal(res.status, 400, bad);
          assert.match(await res.text(), /INVALID_PARAMETER/);
        }

        // 1,000 references to it: about 150 MB of answer, read by a client that stops after the first
        // bytes. Built whole before it is sent, the batch would have released its slot by then.
        const refs = Array.from({ length: 1000 }, (_, i) =>
          i % 2 ? `${NAME}/bulk:v1` : `${NAME}/bulk:=v1.0.0`,
        );
        let received = 0;
        let results = 0;
        let tail = '';
        let ended = false;
        let resume = () => {};
        let firstBytes = () => {};
        const started = new Promise<void>((resolve) => {
          firstBytes = resolve;
        });
        const finished = new Promise<number>((resolve, reject) => {
          const req = request(
            `${server.url}/api/v1/resolve`,
            { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
            (res) => {
              let paused = false;
              res.on('data', (chunk: Buffer) => {
                received += chunk.length;
                // Counted across chunk boundaries: each result starts with {"ref":.
                const text = tail + chunk.toString('latin1');
                results += text.split('{"ref":').length - 1;
                tail = text.slice(-7);
                if (!paused) {
                  paused = true;
                  res.pause();
                  firstBytes();
                }
              });
              res.on('end', () => {
                ended = true;
                resolve(res.statusCode ?? 0);
              });
              resume = () => res.resume();
            },
          );
          req.on('error', reject);
          req.end(JSON.stringify({ refs }));
        });
        await started;
        assert.equal(ended, false);
        const other = await fetch(`${server.url}/api/v1/resolve?ref=${REG}/redis:v1.0`);
        assert.equal(other.status, 200);
        assert.equal(((await other.json()) as { version: string }).version, 'v1.0.3');
        const work = await boundedWork(server.url, 'batch-resolve');
        assert.equal(
          work.running,
          1,
          `the batch's slot while its client is not reading: ${JSON.stringify(work)}`,
        );
        assert.ok(received < 150_000_000, String(received));
        resume();
        assert.equal(await finished, 200);
        assert.ok(received > 100_000_000, `${received} bytes`);
        assert.equal(results, refs.length);
        assert.equal((await boundedWork(server.url, 'batch-resolve')).running, 0);

        // A small batch reads as one JSON answer, failures per reference.
        const small = await fetch(`${server.url}/api/v1/resolve`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ refs: [`${NAME}/bulk:v1`, `${NAME}/nope:v1`] }),
        });
        assert.equal(small.status, 200);
        const answer = (await small.json()) as {
          results: { ref: string; resolution?: FileList; error?: { code: string } }[];
        };
        assert.equal(answer.results[0]?.resolution?.files.length, FILES);
        assert.equal(answer.results[1]?.error?.code, 'TEMPLATE_NOT_FOUND');
        const none = await fetch(`${server.url}/api/v1/resolve`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ refs: [] }),
        });
        assert.deepEqual(await none.json(), { results: [] });
        assert.equal(server.exited(), undefined, server.log().slice(-2000));
        assert.equal(await server.stop(), 0);
      } finally {
        server.dispose();
      }
    });
  });
}
