/**
 * Rendering processes started warm (render-sandbox.ts startRenderersEarly's `warm`;
 * docs/expansion.md, "Speed"): each serves a warm-up of dm's own before it says it is ready, and
 * nothing of it reaches a run: the same expansions and renderings through warmed and unwarmed
 * processes give the same bytes (the realistic DM configurations, the bench's 100 resources, the
 * Jinja fidelity corpus), the Python process has the same modules loaded, and without the option
 * (`dm expand`'s own start) no process warms up.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { prestartForExpand } from '../../client/src/cli/prestart.js';
import { formatYaml, parseYaml } from '../../client/src/document/yaml.js';
import { forkRenderer } from '../../client/src/expand/sandbox/fork-renderer.js';
import { RENDERER_WARM_ARG } from '../../client/src/expand/sandbox/render-protocol.js';
import {
  jinjaRendererOptions,
  pythonCommand,
  RenderSandbox,
  startRenderersEarly,
} from '../../client/src/expand/sandbox/render-sandbox.js';
import { startedWarmUp } from '../../client/src/expand/sandbox/renderer-warm-up.js';
import { dmBin, isolatedEnv, runProcess } from '../support/run-cli.js';
import { configurations, expandCorpusConfiguration } from './dm-corpus-files.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = [join(here, '../../..'), join(here, '../..')].find((d) =>
  existsSync(join(d, 'test/expand/dm-corpus')),
)!;

/** The processes this one started and that still run. */
function children(): number[] {
  const out = spawnSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' }).stdout;
  return out
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((pid) => pid > 0 && existsSync(`/proc/${pid}`))
    .sort();
}

/** A child's arguments, once it has exec'd (until then they are this process's: bounded, not timed). */
function argvOf(pid: number): string[] {
  for (let i = 0; i < 5000; i++) {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (argv.some((a) => /^--(experimental-)?permission$/.test(a)) || argv[0] === 'python3') return argv;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
  }
  throw new Error(`process ${pid} did not exec a renderer`);
}

/** A sandbox that takes over processes started early, warm or not (a heap limit of their own). */
async function sandboxStarted(
  warm: boolean,
  memoryMb: number,
): Promise<{ sandbox: RenderSandbox; pids: number[] }> {
  const before = children();
  // The early processes do not keep this one alive: a timer does while they start.
  const alive = setInterval(() => {}, 1000);
  await startRenderersEarly({ jinja: true, python: true }, { memoryMb, warm }).finally(() =>
    clearInterval(alive),
  );
  const pids = children().filter((pid) => !before.includes(pid));
  assert.equal(pids.length, 2);
  for (const pid of pids) assert.equal(argvOf(pid).includes(RENDERER_WARM_ARG), warm);
  return { sandbox: new RenderSandbox({ memoryMb }), pids };
}

/** What `dm expand -o yaml` would print for the configuration, or the error it would give. */
async function expanded(sandbox: RenderSandbox, config: string, deployment: string): Promise<string> {
  try {
    const result = await expandCorpusConfiguration(sandbox, config, deployment);
    return formatYaml({ config: result.config, layout: result.layout });
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

describe('rendering processes started warm', { timeout: 15 * 60_000 }, () => {
  const sandboxes: RenderSandbox[] = [];
  after(() => {
    for (const s of sandboxes) s.close();
  });

  it('say how many of the warm-up requests they served, and nothing on stderr', async () => {
    const forked = forkRenderer({ ...jinjaRendererOptions(256, undefined), warm: true });
    const said = new Promise<unknown>((resolve) => forked.child.on('message', resolve));
    try {
      await forked.ready;
      assert.deepEqual(await said, {
        ready: true,
        warmUp: startedWarmUp().rounds * startedWarmUp().requests,
      });
      assert.equal(forked.stderrTail(), '');
    } finally {
      forked.child.kill('SIGKILL');
    }

    const [command, args, options] = pythonCommand('python3', 256);
    const python = spawn(command, [...args, RENDERER_WARM_ARG], options);
    let out = '';
    let err = '';
    python.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) python.stdin!.end();
    });
    python.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const code2 = await new Promise<number | null>((resolve) => python.on('close', resolve));
    assert.equal(code2, 0, err);
    assert.equal(err, '');
    const ready = JSON.parse(out.split('\n')[0] as string) as { ready: boolean; warmUp?: number };
    assert.equal(ready.ready, true);
    assert.equal(ready.warmUp, 60);
  });

  it('give the same bytes as processes started cold, and the Python process the same modules', async () => {
    const cold = await sandboxStarted(false, 301);
    sandboxes.push(cold.sandbox);
    const warm = await sandboxStarted(true, 302);
    sandboxes.push(warm.sandbox);

    // Files named as the warm-up's own, in the first file set this process sends (so numbered as
    // the first of a run): what the warm-up rendered is not what they render.
    const mine = {
      'macros.jinja': '{% macro labels(map, extra={}) %}mine: {{ map.a }}{% endmacro %}',
      'warm-up.jinja': "{% import 'macros.jinja' as m %}{{ m.labels({'a': 1}) }} {{ properties.port }}",
    };
    for (const { sandbox } of [warm, cold]) {
      const text = await sandbox.renderJinja({
        name: 'warm-up.jinja',
        source: mine['warm-up.jinja'],
        context: { properties: { port: 1 }, env: { name: 'warm-up' } },
        files: mine,
      });
      assert.equal(text, 'mine: 1 1');
    }

    // The modules the Python process has loaded before its first template (the warm-up loads
    // none).
    const modules = `import sys\ndef GenerateConfig(context):\n    return {'modules': sorted(sys.modules)}\n`;
    const loaded = (sandbox: RenderSandbox) =>
      sandbox.renderPython({
        name: 'modules.py',
        source: modules,
        context: { properties: {} },
        files: {},
        ownFile: true,
      });
    assert.deepEqual(await loaded(warm.sandbox), await loaded(cold.sandbox));

    // The realistic configurations (test/expand/dm-corpus) and the bench's 100 resources.
    const corpus = join(repoRoot, 'test/expand/dm-corpus');
    const benchDir = mkdtempSync(join(tmpdir(), 'dm-renderer-warm-'));
    after(() => rmSync(benchDir, { recursive: true, force: true }));
    const wrote = spawnSync(
      process.execPath,
      [join(repoRoot, 'dist/bench/expand.js'), '--write', benchDir, '--sizes', '100'],
      { encoding: 'utf8' },
    );
    assert.equal(wrote.status, 0, wrote.stderr);
    const configs = [...configurations(corpus), join(benchDir, 'n100', 'config.yaml')];
    assert.ok(configs.length >= 8, `only ${configs.length} configurations`);
    for (const config of configs) {
      const deployment = relative(dirname(corpus), dirname(config)).replace(/[^a-z0-9]+/gi, '-');
      // Warm first: its requests get the first numbers this process gives file sets.
      const b = await expanded(warm.sandbox, config, deployment);
      const a = await expanded(cold.sandbox, config, deployment);
      assert.ok(!a.startsWith('error: '), `${config}: ${a}`);
      assert.equal(b, a, config);
    }

    // The Jinja fidelity corpus: every case's text, or its error, alike.
    const doc = parseYaml(readFileSync(join(repoRoot, 'test/expand/corpus/jinja-cases.yaml'), 'utf8')) as {
      defaults: { context: Record<string, unknown> };
      cases: {
        name: string;
        template: string;
        context?: Record<string, unknown>;
        files?: Record<string, string>;
      }[];
    };
    assert.ok(doc.cases.length > 100);
    const render = (sandbox: RenderSandbox, c: (typeof doc.cases)[number]) =>
      sandbox
        .renderJinja({
          name: 'template.jinja',
          source: c.template,
          context: { ...doc.defaults.context, ...(c.context ?? {}) },
          files: c.files ?? {},
        })
        .catch((error: Error) => `error: ${error.message}`);
    for (const c of doc.cases)
      assert.equal(await render(warm.sandbox, c), await render(cold.sandbox, c), c.name);

    // Served by the processes started early, not by fresh ones.
    const now = children();
    for (const pid of [...cold.pids, ...warm.pids])
      assert.ok(now.includes(pid), `process ${pid} was replaced`);
  });

  it('warm up from the startup snapshot too, and answer as one started cold from it', async () => {
    // The snapshot, as dm makes it: two runs in a cache directory of this test's own.
    const dir = mkdtempSync(join(tmpdir(), 'dm-renderer-warm-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'a.jinja'), 'resources:\n- {name: a, type: S}\n');
    writeFileSync(
      join(dir, 'config.yaml'),
      'imports:\n- path: a.jinja\nresources:\n- {name: a, type: a.jinja}\n',
    );
    const home = await isolatedEnv();
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...home, DM_AGENT: 'off' };
    for (let i = 0; i < 2; i++) {
      const run = await runProcess(process.execPath, [dmBin, 'expand', 'config.yaml', '-o', 'yaml'], {
        cwd: dir,
        env,
        killAfterMs: 300_000,
      });
      assert.equal(run.code, 0, run.stderr);
    }
    const snapshots = join(home.XDG_CACHE_HOME as string, 'dm', 'renderer-snapshots');
    let blob: string | undefined;
    // The background build: bounded, not timed.
    for (let waited = 0; waited < 180_000 && !blob; waited += 100) {
      const names = existsSync(snapshots) ? readdirSync(snapshots) : [];
      if (!names.some((n) => n.endsWith('.building'))) blob = names.find((n) => n.endsWith('.blob'));
      if (!blob) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(blob, `no snapshot was made in ${snapshots}`);
    const digest = /-([0-9a-f]{32})\.\d+\.blob$/.exec(blob)?.[1];
    assert.ok(digest, blob);
    const entry = join(repoRoot, 'dist', 'bundle', 'renderers', 'jinja-child.cjs');
    const request = {
      id: 1,
      name: 't.jinja',
      source: "a: {{ properties.x + 1 }}\nb: {{ env.name | upper }}\nc: {{ ['x', 'y'] | join('-') }}\n",
      context: { properties: {}, env: { name: 'p' } },
      filesId: 1,
      files: {},
      parse: { source: 't.jinja', maxNodes: 100 },
      schema: 't.schema',
      schemaFiles: { 't.schema': 'properties:\n  x: {type: integer, default: 41}\n' },
      schemaFilesId: 2,
      check: { subject: 't', mode: 'strict' },
    };
    const answers: unknown[] = [];
    for (const warm of [true, false]) {
      const forked = forkRenderer({
        entry,
        readTrees: [],
        readFiles: [entry],
        digest,
        snapshot: join(snapshots, blob),
        memoryMb: 512,
        label: 'the Jinja renderer',
        warm,
      });
      const messages: unknown[] = [];
      forked.child.on('message', (m) => messages.push(m));
      try {
        const child = await forked.ready;
        const expected = startedWarmUp().rounds * startedWarmUp().requests;
        assert.deepEqual(messages[0], {
          ready: true,
          snapshot: digest,
          ...(warm ? { warmUp: expected } : {}),
        });
        const answered = new Promise((resolve) =>
          child.on('message', (m: { id?: number }) => m.id === 1 && resolve(m)),
        );
        child.send([request]);
        answers.push(await answered);
        assert.equal(forked.stderrTail(), '');
      } finally {
        forked.child.kill('SIGKILL');
      }
    }
    assert.deepEqual(answers[0], answers[1]);
    assert.deepEqual(answers[0], {
      id: 1,
      ok: true,
      data: { a: 42, b: 'P', c: 'x-y' },
      properties: { x: 41 },
      violations: [],
    });
  });

  it("are not what dm expand's own early start makes", () => {
    const dir = mkdtempSync(join(tmpdir(), 'dm-renderer-warm-'));
    try {
      const config = join(dir, 'config.yaml');
      writeFileSync(
        config,
        'imports:\n- path: a.jinja\n- path: b.py\nresources:\n- {name: a, type: a.jinja}\n',
      );
      const before = children();
      prestartForExpand([config, '--memory', '303']);
      const started = children().filter((pid) => !before.includes(pid));
      assert.ok(started.length >= 1);
      for (const pid of started) assert.ok(!argvOf(pid).includes(RENDERER_WARM_ARG));
      for (const pid of started) process.kill(pid, 'SIGKILL');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
