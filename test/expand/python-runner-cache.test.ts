/**
 * The Python runner's compiled code in dm's cache directory (client/src/expand/python/runner-cache.ts):
 * made at the second run that misses it, then what the Python process runs; another Python's
 * code, damaged code and a file that is not whole are never run (the runner is compiled from its
 * source instead, as without the cache).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { buildCompiledRunner } from '../../client/src/expand/python/runner-cache.js';
import { PYTHON_RUNNER_SOURCE } from '../../client/src/expand/python/runner-source.js';
import { pythonCommand, RenderSandbox } from '../../client/src/expand/sandbox/render-sandbox.js';

const root = mkdtempSync(join(tmpdir(), 'dm-runner-cache-'));
after(() => rmSync(root, { recursive: true, force: true }));

const GOOD =
  'def GenerateConfig(context):\n    return {"resources": [{"name": "a", "type": "t", "properties": {"x": 1.0}}]}\n';
const NONE = 'x = 1\n';

/** What a sandbox keeping its compiled runner in `dir` answers for a template (or the error it throws). */
async function run(dir: string | undefined, source: string): Promise<string> {
  const sandbox = new RenderSandbox(dir === undefined ? {} : { pythonRunners: dir });
  try {
    const result = await sandbox.renderPython({
      name: 't.py',
      source,
      context: { properties: {}, env: { name: 'n' } },
      files: { 't.py': source },
      ownFile: true,
    });
    return JSON.stringify(result);
  } catch (error) {
    return `error: ${(error as Error).message}`;
  } finally {
    sandbox.close();
  }
}

/** The cache file in `dir` (one). */
function cached(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.endsWith('.marshal'));
}

/** `source` compiled and marshalled by /usr/bin/python3, with the header of `version` (default: its own). */
function compiledFile(source: string, version?: string): Buffer {
  const program = [
    'import sys, marshal, json',
    'code = marshal.dumps(compile(sys.stdin.read(), "<string>", "exec"))',
    `v = ${JSON.stringify(version ?? '')} or sys.version`,
    'sys.stdout.buffer.write((json.dumps({"version": v}) + "\\n").encode() + code)',
  ].join('\n');
  const out = spawnSync('/usr/bin/python3', ['-I', '-c', program], { input: source, maxBuffer: 1 << 24 });
  assert.equal(out.status, 0, String(out.stderr));
  return out.stdout;
}

/** Puts `data` in place of the cache file of `dir`, its size in its name (`size`: another one). */
function replaceCached(dir: string, data: Buffer, size = data.length): void {
  const [name] = cached(dir);
  assert.ok(name);
  const key = name.slice(0, name.indexOf('.'));
  rmSync(join(dir, name));
  writeFileSync(join(dir, `${key}.${size}.marshal`), data);
}

describe("the Python runner's compiled code", () => {
  it('is made at the second run that misses it, and then run, with the same answers', async () => {
    const dir = join(root, 'made');
    const plain = await run(undefined, GOOD);
    assert.match(plain, /"resources"/);
    assert.equal(await run(dir, GOOD), plain);
    assert.deepEqual(cached(dir), [], 'a first miss only marks it wanted');
    assert.ok(readdirSync(dir).some((n) => n.endsWith('.wanted')));
    // The second miss starts the build in the background; here it is built and waited for.
    await buildCompiledRunner(dir, 'python3', true);
    const [name] = cached(dir);
    assert.ok(name, 'the compiled runner is kept');
    assert.equal(readFileSync(join(dir, name)).length, Number(name.split('.')[1]));
    assert.ok(!readdirSync(dir).some((n) => n.endsWith('.wanted')));
    const [, args, , code] = pythonCommand('python3', 512, dir);
    assert.match(args[2] ?? '', /^import sys, marshal\n/);
    assert.ok(code && code.length > 1000);
    assert.equal(await run(dir, GOOD), plain);
    assert.match(await run(dir, NONE), /defines neither GenerateConfig/);
  });

  it('is what the Python process runs when it is whole and of this Python', async () => {
    const dir = join(root, 'forged');
    await run(dir, GOOD);
    await buildCompiledRunner(dir, 'python3', true);
    const forged = PYTHON_RUNNER_SOURCE.replace("'%s defines neither", "'FORGED %s defines neither");
    assert.notEqual(forged, PYTHON_RUNNER_SOURCE);
    replaceCached(dir, compiledFile(forged));
    assert.match(await run(dir, NONE), /FORGED t\.py defines neither/);
  });

  it("is not run when it is another Python's, damaged, or not whole", async () => {
    const forged = PYTHON_RUNNER_SOURCE.replace("'%s defines neither", "'FORGED %s defines neither");
    const cases: [string, (dir: string) => void][] = [
      ['another Python', (dir) => replaceCached(dir, compiledFile(forged, '2.7.18 (other)'))],
      [
        'damaged code',
        (dir) => {
          const good = compiledFile(forged);
          const nl = good.indexOf(10);
          replaceCached(
            dir,
            Buffer.concat([good.subarray(0, nl + 1), Buffer.alloc(good.length - nl - 1, 0x41)]),
          );
        },
      ],
      ['not whole', (dir) => replaceCached(dir, compiledFile(forged), compiledFile(forged).length + 7)],
      ['no header', (dir) => replaceCached(dir, Buffer.from('garbage without a header'))],
    ];
    for (const [what, damage] of cases) {
      const dir = join(root, what.replace(/ /g, '-'));
      await run(dir, GOOD);
      await buildCompiledRunner(dir, 'python3', true);
      damage(dir);
      const answer = await run(dir, NONE);
      assert.match(answer, /defines neither GenerateConfig/, what);
      assert.doesNotMatch(answer, /FORGED/, what);
      assert.match(await run(dir, GOOD), /"resources"/, what);
    }
    // A file that is not whole is deleted (and made again by a later run).
    const notWhole = join(root, 'not-whole');
    assert.ok(!cached(notWhole).some((n) => n.endsWith(`.${compiledFile(forged).length + 7}.marshal`)));
    assert.ok(existsSync(notWhole));
  });
});
