/**
 * Errors in plain language with the right exit code: config validation before writing, a broken
 * config file that never blocks `dm config`, an explicit --config that must exist, numeric and URL
 * flags, "did you mean" for flags, system errors (a directory, a busy port) as sentences.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { exitCodeFor, fromSystemError } from '../../client/src/error.js';
import { nearest } from '../../client/src/nearest.js';
import { type CliResult, dmBin, isolatedEnv, repoRoot, runDm, runProcess } from '../support/run-cli.js';

function runRegistry(args: string[], env: Record<string, string>): Promise<CliResult> {
  return runProcess(process.execPath, [join(repoRoot, 'bin', 'dm-registry.js'), ...args], {
    env: { ...process.env, ...env },
  });
}

describe('dm config', () => {
  it('dm config set validates before writing; get and unset; a broken file never blocks dm config', async () => {
    const env = await isolatedEnv();
    const file = join(env.XDG_CONFIG_HOME!, 'dm', 'config.yaml');
    for (const [key, value, pattern] of [
      ['output', 'xml', /output format 'xml' is not one of text, yaml, json/],
      ['offline', 'maybe', /offline must be true or false/],
      ['registryUrl', 'not-a-url', /registryUrl 'not-a-url' is not an http\(s\) URL/],
      ['sources', '[a, b]', /sources must be a mapping/],
      ['colour', 'red', /unknown config key 'colour'/],
    ] as const) {
      const r = await runDm(['config', 'set', key, value], { env });
      assert.notEqual(r.code, 0, `${key} ${value}`);
      assert.match(r.stderr, pattern);
      assert.equal(existsSync(file), false, `nothing written for ${key} ${value}`);
    }
    const set = await runDm(['config', 'set', 'output', 'yaml'], { env });
    assert.equal(set.code, 0, set.stderr);
    const get = await runDm(['config', 'get', 'output'], { env });
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /yaml/);

    // A file broken by hand: other commands fail naming it, dm config still works and repairs it.
    await writeFile(file, 'output: xml\nregistry: a/b\n');
    const other = await runDm(['deployments', 'list'], { env });
    assert.equal(other.code, 2, other.stderr);
    assert.match(other.stderr, /config\.yaml: output format 'xml'/);
    const view = await runDm(['config', 'view'], { env });
    assert.equal(view.code, 0, view.stderr);
    assert.match(view.stderr, /warning: .*config\.yaml.*output format 'xml'/);
    const unset = await runDm(['config', 'unset', 'output'], { env });
    assert.equal(unset.code, 0, unset.stderr);
    assert.equal(await readFile(file, 'utf8'), 'registry: a/b\n');
    const fixed = await runDm(['deployments', 'list'], { env });
    assert.equal(fixed.code, 0, fixed.stderr);
    const unsetAgain = await runDm(['config', 'unset', 'output'], { env });
    assert.equal(unsetAgain.code, 0, unsetAgain.stderr);
    assert.match(unsetAgain.stdout, /not set/);

    // A file that is not YAML at all: set moves it aside (saying so) and writes a new one.
    await writeFile(file, 'output: [\nregistry: a/b\n');
    const unreadable = await runDm(['config', 'get', 'output'], { env });
    assert.equal(unreadable.code, 1, unreadable.stderr);
    assert.match(unreadable.stderr, /config\.yaml:2: invalid YAML/);
    const repaired = await runDm(['config', 'set', 'output', 'json'], { env });
    assert.equal(repaired.code, 0, repaired.stderr);
    assert.match(repaired.stderr, /moved the unreadable .*config\.yaml to .*config\.yaml\.broken/);
    assert.equal(await readFile(file, 'utf8'), 'output: json\n');
    assert.equal(await readFile(`${file}.broken`, 'utf8'), 'output: [\nregistry: a/b\n');
    const works = await runDm(['deployments', 'list'], { env });
    assert.equal(works.code, 0, works.stderr);
  });

  it('dm --config FILE: a config file named explicitly must exist (exit 3); a directory is a sentence', async () => {
    const env = await isolatedEnv();
    const r = await runDm(['--config', 'nosuch.yaml', 'deployments', 'list'], { env });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /config file nosuch\.yaml does not exist \(named by --config\)/);
    const d = await runDm(['--config', tmpdir(), 'deployments', 'list'], { env });
    assert.equal(d.code, 1, d.stderr);
    assert.match(d.stderr, /is a directory/);
    assert.doesNotMatch(d.stderr, /EISDIR/);
  });
});

describe('flags', () => {
  it('numeric flags and --registry-url are validated (usage error, exit 2)', async () => {
    const env = await isolatedEnv();
    for (const [args, pattern] of [
      [['search', 'redis', '--limit', 'abc'], /--limit 'abc' is not a whole number greater than 0/],
      [['search', 'redis', '--limit', '0'], /--limit '0'/],
      [['expand', 'x.yaml', '--timeout', 'abc'], /--timeout 'abc' is not a number greater than 0/],
      [
        ['search', 'redis', '--registry-url', 'not-a-url'],
        /--registry-url 'not-a-url' is not an http\(s\) URL/,
      ],
    ] as const) {
      const r = await runDm(args, { env });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, pattern);
    }
  });

  it('an unknown flag gets "did you mean" with the nearest known one', async () => {
    const r = await runDm(['install', '--frozen']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown option '--frozen'\n\(Did you mean --frozen-lockfile\?\)/);
    const g = await runDm(['expand', 'x', '--propertes', 'a=1']);
    assert.match(g.stderr, /Did you mean --properties\?/);
  });

  it('nearest() suggests within a few edits or by prefix, and nothing when far', () => {
    assert.equal(nearest('--frozen', ['--frozen-lockfile', '--force']), '--frozen-lockfile');
    assert.equal(nearest('maxMemroy', ['maxMemory', 'image']), 'maxMemory');
    assert.equal(nearest('registy', ['registry', 'registryUrl']), 'registry');
    assert.equal(nearest('zzzz', ['registry', 'output']), undefined);
  });
});

describe('system errors as sentences', () => {
  it('fromSystemError() says real EISDIR, EACCES, ENOENT and EADDRINUSE errors as sentences naming the subject', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-syserr-'));
    const caught = (fn: () => unknown): unknown => {
      try {
        fn();
      } catch (error) {
        return error;
      }
      assert.fail('expected an error');
    };
    const isDir = fromSystemError(
      caught(() => readFileSync(dir)),
      'values.yaml',
    );
    assert.equal(isDir?.code, 'IS_A_DIRECTORY');
    assert.equal(isDir?.message, 'values.yaml is a directory, not a file');
    assert.equal(exitCodeFor(isDir), 2);
    // Executing a file without the x bit is EACCES even for root (reading one is not).
    const script = join(dir, 'not-executable');
    await writeFile(script, '#!/bin/sh\n');
    const spawned = spawnSync(script);
    assert.equal((spawned.error as NodeJS.ErrnoException | undefined)?.code, 'EACCES');
    const denied = fromSystemError(spawned.error);
    assert.equal(denied?.code, 'PERMISSION_DENIED');
    assert.equal(denied?.message, `permission denied: ${script}`);
    const missing = fromSystemError(
      caught(() => readFileSync(join(dir, 'nosuch.yaml'))),
      'nosuch.yaml',
    );
    assert.equal(missing?.message, 'nosuch.yaml does not exist');
    assert.equal(exitCodeFor(missing), 3);
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    const second = createServer();
    const inUse = await new Promise<unknown>((resolve) => {
      second.once('error', resolve);
      second.listen(port, '127.0.0.1');
    });
    busy.close();
    assert.equal(fromSystemError(inUse, '--port')?.message, `port ${port} is in use (--port)`);
    assert.equal(fromSystemError(new Error('something else')), undefined);
  });

  it('dm merge DIR says it is a directory (exit 2), not the errno', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-merge-dir-'));
    await mkdir(join(dir, 'd'));
    await writeFile(join(dir, 'a.yaml'), 'a: 1\n');
    const r = await runDm(['merge', 'a.yaml', 'd'], { cwd: dir });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, 'error: d is a directory, not a file\n');
  });

  it('dm template render DIR says it is a directory (exit 2)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-dir-'));
    await mkdir(join(dir, 't.jinja'));
    const r = await runDm(['template', 'render', 't.jinja'], { cwd: dir });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^error: t\.jinja is a directory, not a file\n/);
  });

  it('dm-registry start on a busy port says so, naming --port, without a stack', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const dir = await mkdtemp(join(tmpdir(), 'dm-busy-'));
      const r = await runRegistry(['start', '--port', String(port), '--db', `file:${join(dir, 'r.db')}`], {});
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`port ${port} is in use \\(--port\\)`));
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    } finally {
      busy.close();
    }
  });

  it('a reader that closes the pipe early (dm … | head) ends dm quietly: no EPIPE stack', async () => {
    // stdout is a pipe whose only reader is closed before dm writes: every write fails with EPIPE.
    const child = spawn(process.execPath, [dmBin, 'completion', 'bash'], {
      env: { ...process.env, ...(await isolatedEnv()) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    assert.equal(stderr, '');
    assert.equal(code, 0);
  });

  it('dm-registry --version prints the version', async () => {
    const r = await runRegistry(['--version'], {});
    assert.equal(r.code, 0, r.stderr);
    const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    assert.equal(r.stdout.trim(), pkg.version);
  });
});

describe('messages for empty results', () => {
  it('dm render warns about a document without metadata, naming it; -q silences it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-render-'));
    await writeFile(
      join(dir, 'site.yaml'),
      [
        'schema: deckhand/LayeringPolicy/v1',
        'metadata: {schema: metadata/Control/v1, name: layering-policy}',
        'data: {layerOrder: [global, site]}',
        '---',
        'schema: example/Kind/v1',
        'data: {a: 1}',
        '',
      ].join('\n'),
    );
    const r = await runDm(['render', 'site.yaml'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stderr,
      'warning: site.yaml, document 2 has no metadata, so it takes no part in layering (printed as it is)\n',
    );
    assert.match(r.stdout, /schema: example\/Kind\/v1\ndata:\n {2}a: 1\n/);
    const quiet = await runDm(['render', 'site.yaml', '-q'], { cwd: dir });
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, '');
  });

  it('dm lint on a directory without templates: "no templates found: is this a registry root?" (exit 1)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-empty-'));
    const r = await runDm(['lint', dir]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /no templates found: is this a registry root\?/);
    const ok = await runDm(['lint', 'registry-fixtures']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(
      ok.stdout,
      /0 errors, 0 warnings \(\d+ templates, \d+ versions served, \d+ named collections\)/,
    );
  });

  it('counts read as English: "1 template, 1 version served, 1 named collection"', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-one-'));
    await mkdir(join(dir, 'ops', 'redis', 'v1'), { recursive: true });
    await writeFile(
      join(dir, 'ops', 'redis', 'v1', 'redis.jinja'),
      'resources:\n- name: r\n  type: Service\n',
    );
    await writeFile(
      join(dir, 'ops', 'redis', 'v1', 'example.yaml'),
      'resources:\n- name: r\n  type: redis.jinja\n',
    );
    const r = await runDm(['lint', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      `${dir}: 0 errors, 0 warnings (1 template, 1 version served, 1 named collection)\n`,
    );
  });

  it('dm manifests nosuch says the deployment does not exist (exit 3); dm types instances nosuch says there are none', async () => {
    const env = await isolatedEnv();
    const m = await runDm(['manifests', 'nosuch'], { env });
    assert.equal(m.code, 3, m.stderr);
    assert.match(m.stderr, /deployment 'nosuch' does not exist/);
    const t = await runDm(['types', 'instances', 'nosuch'], { env });
    assert.equal(t.code, 0, t.stderr);
    assert.equal(t.stdout, "no instances of type 'nosuch'\n");
    const j = await runDm(['types', 'instances', 'nosuch', '-o', 'json'], { env });
    assert.deepEqual(JSON.parse(j.stdout), []);
  });
});
