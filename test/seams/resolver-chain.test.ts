/**
 * One resolver chain (client/src/resolve/build-chain.ts, docs/client.md "The resolver chain"):
 * offline, a URL or an uncached reference is OFFLINE_MISSING (exit 5) for resolve and install
 * alike; install, resolve and outdated agree on what a registry directory holds, whatever
 * happened before (a property over random sequences of registry changes and commands).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isolatedEnv, runDm } from '../support/run-cli.js';

async function registry(versions: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-chain-reg-'));
  await writeFile(join(dir, 'registry.yaml'), 'name: github.com/acme/chain\n');
  for (const v of versions) await addVersion(dir, v);
  return dir;
}

async function addVersion(dir: string, v: string): Promise<void> {
  await mkdir(join(dir, 'redis', v), { recursive: true });
  await writeFile(join(dir, 'redis', v, 'redis.jinja'), `# ${v}\nresources: []\n`);
  await writeFile(join(dir, 'redis', v, 'example.yaml'), 'resources: []\n');
}

describe('the resolver chain, offline', () => {
  it('a plain URL: resolve and install both say OFFLINE_MISSING (exit 5)', async () => {
    const env = await isolatedEnv();
    const url = 'https://templates.invalid/redis/redis.jinja';
    const resolve = await runDm(['--offline', '-o', 'json', 'resolve', url], { env });
    assert.equal(resolve.code, 5, resolve.stderr);
    assert.equal(JSON.parse(resolve.stdout).error.code, 'OFFLINE_MISSING');
    const project = await mkdtemp(join(tmpdir(), 'dm-chain-proj-'));
    await writeFile(join(project, 'config.yaml'), `resources:\n- name: r\n  type: ${url}\n`);
    const install = await runDm(['--offline', '-o', 'json', 'install'], { env, cwd: project });
    assert.equal(install.code, 5, install.stderr);
    assert.equal(JSON.parse(install.stdout).error.code, 'OFFLINE_MISSING');
  });

  it('an uncached reference with --registry-url: OFFLINE_MISSING (exit 5), no request', async () => {
    const env = await isolatedEnv();
    const r = await runDm(
      [
        '--offline',
        '--registry-url',
        'http://127.0.0.1:9',
        '-o',
        'json',
        'resolve',
        'github.com/acme/x/redis:v1',
      ],
      { env },
    );
    assert.equal(r.code, 5, r.stderr);
    assert.equal(JSON.parse(r.stdout).error.code, 'OFFLINE_MISSING');
  });

  it('dm search: OFFLINE_MISSING (exit 5) like every other offline miss, no request', async () => {
    const env = await isolatedEnv();
    const r = await runDm(
      ['--offline', '--registry-url', 'http://127.0.0.1:9', '-o', 'json', 'search', 'redis'],
      {
        env,
      },
    );
    assert.equal(r.code, 5, r.stderr);
    assert.equal(JSON.parse(r.stdout).error.code, 'OFFLINE_MISSING');
  });
});

type Step = { op: 'add' } | { op: 'install' } | { op: 'resolve' } | { op: 'outdated' };

describe('install, resolve and outdated agree on a registry directory', () => {
  it('after any sequence of new versions and commands (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.constantFrom<Step>({ op: 'add' }, { op: 'install' }, { op: 'resolve' }, { op: 'outdated' }),
          {
            minLength: 1,
            maxLength: 5,
          },
        ),
        async (steps) => {
          const env = await isolatedEnv();
          const dir = await registry(['v1.0.1']);
          const project = await mkdtemp(join(tmpdir(), 'dm-chain-proj-'));
          await writeFile(join(project, 'config.yaml'), 'resources:\n- name: c\n  type: redis:v1.0\n');
          let newest = 1;
          let locked: string | undefined;
          const dm = (args: string[]) => runDm(['--registry-dir', dir, ...args], { env, cwd: project });
          for (const step of [...steps, { op: 'install' } as Step, { op: 'resolve' } as Step]) {
            if (step.op === 'add') {
              newest++;
              await addVersion(dir, `v1.0.${newest}`);
            } else if (step.op === 'install') {
              const r = await dm(['install']);
              assert.equal(r.code, 0, r.stderr);
              const lock = await readFile(join(project, 'dm.lock'), 'utf8');
              locked = /version: (v[\d.]+)/.exec(lock)?.[1];
              // A fresh project installs the newest: what was cached never hides the directory.
              if (!locked || locked !== `v1.0.${newest}`) {
                // the existing lock pins its version; it must still be one the directory has
                assert.ok(locked && Number(locked.split('.')[2]) <= newest, `locked ${locked}`);
              }
            } else if (step.op === 'resolve') {
              const r = await dm(['-o', 'json', 'resolve', 'redis:v1.0']);
              assert.equal(r.code, 0, r.stderr);
              assert.equal(JSON.parse(r.stdout)[0].version, `v1.0.${newest}`);
            } else {
              const r = await dm(['-o', 'json', 'outdated']);
              if (!locked) {
                assert.equal(r.code, 3, r.stderr);
                continue;
              }
              const list = JSON.parse(r.stdout) as { wanted: string }[];
              const wanted = list[0]?.wanted ?? locked;
              assert.equal(wanted, `v1.0.${newest}`);
              assert.equal(r.code, list.length > 0 ? 1 : 0, r.stderr);
            }
          }
          // A second project installed now locks exactly what resolve says.
          const fresh = await mkdtemp(join(tmpdir(), 'dm-chain-proj-'));
          await writeFile(join(fresh, 'config.yaml'), 'resources:\n- name: c\n  type: redis:v1.0\n');
          const r = await runDm(['--registry-dir', dir, 'install'], { env, cwd: fresh });
          assert.equal(r.code, 0, r.stderr);
          assert.match(
            await readFile(join(fresh, 'dm.lock'), 'utf8'),
            new RegExp(`version: v1\\.0\\.${newest}\\n`),
          );
        },
      ),
      { numRuns: 6 },
    );
  });
});
