/**
 * Rendering processes started before their sandbox (render-sandbox.ts, startRenderersEarly; what
 * `dm expand` does first thing): a sandbox takes one over only where it would have started the same
 * process, never one that died, and those not taken neither keep dm running nor outlive it.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { prestartForExpand } from '../../client/src/cli/prestart.js';
import { RenderSandbox, startRenderersEarly } from '../../client/src/expand/sandbox/render-sandbox.js';
import { repoRoot } from '../support/run-cli.js';

/** The processes this one started and that still run. */
function children(): number[] {
  const out = spawnSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' }).stdout;
  return out
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((pid) => pid > 0 && !Number.isNaN(pid))
    .filter((pid) => {
      // ps itself, gone by now, is not one of them.
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    })
    .sort();
}

const context = { properties: { a: 2 }, env: { name: 'x' }, imports: {} };

async function renderBoth(sandbox: RenderSandbox): Promise<void> {
  assert.equal(
    await sandbox.renderJinja({ name: 't.jinja', source: 'a: {{ properties.a + 1 }}', context, files: {} }),
    'a: 3',
  );
  assert.deepEqual(
    await sandbox.renderPython({
      name: 't.py',
      source: 'def GenerateConfig(c):\n    return "b: %d" % c.properties["a"]\n',
      context,
      files: {},
    }),
    { text: 'b: 2' },
  );
}

describe('rendering processes started early', () => {
  it('are taken over by a sandbox with the same options, which starts no other', async () => {
    const before = children();
    startRenderersEarly({ jinja: true, python: true }, { memoryMb: 320 });
    const early = children().filter((pid) => !before.includes(pid));
    assert.equal(early.length, 2);
    const sandbox = new RenderSandbox({ memoryMb: 320 });
    try {
      await renderBoth(sandbox);
      assert.deepEqual(
        children().filter((pid) => !before.includes(pid)),
        early,
      );
    } finally {
      sandbox.close();
    }
  });

  it('are not taken by a sandbox with other options, nor once they died', async () => {
    const before = children();
    startRenderersEarly({ jinja: true, python: true }, { memoryMb: 300 });
    const early = children().filter((pid) => !before.includes(pid));
    assert.equal(early.length, 2);
    const other = new RenderSandbox({ memoryMb: 310 });
    try {
      await renderBoth(other);
      const now = children().filter((pid) => !before.includes(pid));
      assert.equal(now.length, 4, 'the sandbox started its own two');
    } finally {
      other.close();
    }
    for (const pid of early) process.kill(pid, 'SIGKILL');
    // Until they are reaped (and their exit seen): bounded, not timed.
    for (let i = 0; i < 200 && children().some((pid) => early.includes(pid)); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const same = new RenderSandbox({ memoryMb: 300 });
    try {
      await renderBoth(same);
    } finally {
      same.close();
    }
  });

  it('dm expand starts those its configuration names, with its --memory and --python', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dm-early-'));
    try {
      const config = join(dir, 'config.yaml');
      writeFileSync(config, 'imports:\n- path: a.jinja\nresources:\n- {name: a, type: a.jinja}\n');
      const started = (args: string[]) => startedPrograms(args).length;
      /** The renderers (node: Jinja, python3) prestartForExpand starts for `args`. */
      function startedPrograms(args: string[]): string[] {
        const before = children();
        prestartForExpand(args);
        return children()
          .filter((pid) => !before.includes(pid))
          .map((pid) => {
            // Until the child has exec'd, its command line is this process's: bounded, not timed.
            for (let i = 0; i < 5000; i++) {
              const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
              if (argv.some((a) => /^--(experimental-)?permission$/.test(a))) return 'node';
              if (argv[0] === 'python3') return 'python3';
              Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
            }
            return 'unknown';
          })
          .sort();
      }
      assert.equal(started([join(dir, 'missing.yaml'), '-o', 'yaml']), 0);
      assert.equal(started(['-o', 'yaml', config, '--memory', '330']), 1);
      // Taken over by the sandbox `dm expand --memory 330` makes: it starts no other.
      const before = children();
      const sandbox = new RenderSandbox({ memoryMb: 330 });
      try {
        assert.equal(
          await sandbox.renderJinja({ name: 't.jinja', source: '{{ 6 * 7 }}', context, files: {} }),
          '42',
        );
        assert.deepEqual(
          children().filter((pid) => !before.includes(pid)),
          [],
        );
      } finally {
        sandbox.close();
      }
      writeFileSync(config, 'imports:\n- path: b.py\nresources:\n- {name: b, type: b.py}\n');
      // Limits of their own: a second early start of the very same process is not kept.
      assert.deepEqual(startedPrograms([config, '--python=python3', '--memory', '341']), ['python3']);
      // A Python template with a schema beside it: its properties are validated in the Jinja
      // process, which starts first; Python waits for the command (it would slow that start).
      writeFileSync(join(dir, 'b.py.schema'), 'properties:\n  n: {type: integer}\n');
      assert.deepEqual(startedPrograms([config, '--python=python3', '--memory', '342']), ['node']);
      writeFileSync(config, 'imports:\n- path: a.jinja\n- path: c.py\nresources:\n- {name: c, type: c.py}\n');
      assert.deepEqual(startedPrograms([config, '--memory', '343']), ['node']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a closed sandbox kills its processes and does not wait for them to be gone', async () => {
    // Handles that keep this process running: a killed renderer's must not be among them.
    const held = () =>
      process.getActiveResourcesInfo().filter((r) => r === 'ProcessWrap' || r === 'PipeWrap').length;
    const before = children();
    const heldBefore = held();
    const sandbox = new RenderSandbox({ memoryMb: 340 });
    await renderBoth(sandbox);
    const started = children().filter((pid) => !before.includes(pid));
    assert.equal(started.length, 2);
    assert.ok(held() > heldBefore);
    sandbox.close();
    assert.equal(held(), heldBefore);
    // Gone: bounded, not timed.
    for (let i = 0; i < 200 && children().some((pid) => started.includes(pid)); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(
      children().filter((pid) => started.includes(pid)),
      [],
    );
  });

  it('that are never taken neither keep the process running nor outlive it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dm-early-'));
    try {
      const script = join(dir, 'early.mjs');
      const module = join(repoRoot, 'dist/client/src/expand/sandbox/render-sandbox.js');
      writeFileSync(
        script,
        `import { startRenderersEarly } from ${JSON.stringify(module)};\n` +
          `startRenderersEarly({ jinja: true, python: true });\n` +
          `const { execFileSync } = await import('node:child_process');\n` +
          `console.log(execFileSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' }));\n`,
      );
      // Bounded: a process kept alive by its early renderers would hit the timeout.
      const out = execFileSync(process.execPath, [script], { encoding: 'utf8', timeout: 20_000 });
      const pids = out
        .split('\n')
        .map((l) => Number(l.trim()))
        .filter((pid) => pid > 0);
      assert.ok(pids.length >= 3, 'the two renderers were started (and ps)');
      for (const pid of pids) {
        let alive = true;
        for (let i = 0; i < 50 && alive; i++) {
          try {
            // Gone, or a zombie waiting for whoever adopted it to reap it.
            const state = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
            if (state === 'Z' || state === 'X') alive = false;
            else execFileSync('sleep', ['0.1']);
          } catch {
            alive = false;
          }
        }
        assert.equal(alive, false, `process ${pid} outlived the one that started it`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
