/**
 * How much dm says (docs/client.md "Progress, -q and -v"): `-q` makes install, update and pull
 * silent on success, `-v` shows the resolver chain and how long the command took, and on a terminal
 * a command that waits over a second says it is still working (a real pseudo-terminal, from
 * util-linux `script`, around the real `dm`).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dmBin, isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

const CONFIG = 'resources:\n- name: cache\n  type: github.com/dm-samples/templates/redis:v1.0\n';
const FIXTURES = join(repoRoot, 'registry-fixtures');

async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-quiet-'));
  await writeFile(join(dir, 'config.yaml'), CONFIG);
  return dir;
}

describe('-q, -v and progress', () => {
  it('dm install -q prints nothing on success; without it, the table and summary', async () => {
    const env = await isolatedEnv();
    const quiet = await runDm(['install', '--registry-dir', FIXTURES, '-q'], { cwd: await project(), env });
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stdout, '');
    assert.equal(quiet.stderr, '');
    const loud = await runDm(['install', '--registry-dir', FIXTURES], { cwd: await project(), env });
    assert.equal(loud.code, 0, loud.stderr);
    assert.match(loud.stdout, /github\.com\/dm-samples\/templates\/redis:v1\.0 +v1\.0\.3 +added/);
    assert.match(loud.stdout, /wrote .*dm\.lock/);
    // -q silences the text, not data asked for by -o.
    const json = await runDm(['install', '--registry-dir', FIXTURES, '-q', '-o', 'json'], {
      cwd: await project(),
      env,
    });
    assert.equal(json.code, 0, json.stderr);
    assert.equal((JSON.parse(json.stdout) as { references: unknown[] }).references.length, 1);
  });

  it('-q silences warnings in every command (one warner): dm expand --properties with an unknown property', async () => {
    const env = await isolatedEnv();
    const args = ['expand', 'redis:v1.0', '--registry-dir', FIXTURES, '--properties', 'maxMemroy=1gb'];
    const loud = await runDm(args, { env });
    assert.equal(loud.code, 0, loud.stderr);
    assert.match(
      loud.stderr,
      /^warning: property 'maxMemroy' given for .* is not in its schema; did you mean 'maxMemory'\?\n$/,
    );
    const quiet = await runDm([...args, '-q'], { env });
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, '');
    assert.equal(quiet.stdout, loud.stdout);
  });

  it('dm install -v shows the resolver chain in its order and the time taken', async () => {
    const env = await isolatedEnv();
    const cwd = await project();
    const r = await runDm(['install', '--registry-dir', FIXTURES, '-v'], { cwd, env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /^dm: resolving through lock file → cache → registry directory .*registry-fixtures → OCI registries → GitHub → plain URLs\n/m,
    );
    // Then each step as it ends, in order, with what it found and its duration.
    const steps = [...r.stderr.matchAll(/^dm: ([a-z. ]+): (.+) \((\d+) ms\)$/gm)].map((m) =>
      // how many files were fetched depends on what the expansion already read
      `${m[1]}: ${m[2]}`.replace(/^fetch: \d+ files? fetched/, 'fetch: N files fetched'),
    );
    assert.deepEqual(steps, [
      'read dm.lock: none yet',
      `discover: 1 reference in ${join(cwd, 'config.yaml')}`,
      'resolve: 1 version',
      'expand: 1 reference emitted',
      'resolve: 1 version',
      'compare with dm.lock: 1 change',
      'fetch: N files fetched, 0 already cached',
      'write dm.lock: written',
    ]);
    assert.match(r.stderr, /^dm: install took \d+ ms\n/m);
    const offline = await runDm(['install', '--registry-dir', FIXTURES, '-v', '--offline'], {
      cwd: await project(),
      env,
    });
    assert.equal(offline.code, 0, offline.stderr);
    assert.match(offline.stderr, /resolving through lock file → cache → registry directory .* → offline\n/);
  });

  it('on a terminal, a command silent for over a second says it is still working, and erases that', {
    timeout: 300_000,
  }, async () => {
    // A "registry server" that accepts connections and never answers, until the notice has been seen.
    const sockets: Socket[] = [];
    const server = createServer((socket) => {
      sockets.push(socket);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const env = await isolatedEnv();
    const command = [process.execPath, dmBin, 'search', 'redis', '--registry-url', `http://127.0.0.1:${port}`]
      .map((word) => `'${word}'`)
      .join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { ...process.env, ...env, NO_COLOR: '1' },
    });
    let output = '';
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)));
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d) => {
        output += d;
        if (output.includes('working…')) resolve();
      });
      child.on('close', () => resolve());
    });
    for (const socket of sockets) socket.destroy();
    server.close();
    const code = await exited;
    const ERASE = '\r\u001b[K';
    assert.match(output.replaceAll(ERASE, '<erase>'), /<erase>dm search: working… [1-9]\d*s/);
    // Erased before the error is printed: the error starts a clean line.
    assert.match(output.replaceAll(ERASE, '<erase>'), /working… \d+s<erase>error: /);
    assert.notEqual(code, 0, output);
  });

  it('without a terminal (a pipe), no progress notice is printed', async () => {
    const env = await isolatedEnv();
    const r = await runDm(['install', '--registry-dir', FIXTURES], { cwd: await project(), env });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /working…|\r/);
  });
});
