/**
 * Rendering processes started ahead warm against cold (issue 27; docs/expansion.md, "Speed"): the
 * bench's 100-resource configuration (bench/expand.ts --write) expanded in this process, as a
 * per-user agent would expand it (main process already warm: untimed expansions first), with its
 * Jinja and Python processes started early (render-sandbox.ts, startRenderersEarly) and already
 * ready when the expansion starts: cold (as `dm expand` starts them) or with the warm option
 * (renderer-warm-up.ts; the runner's `_warm_up`). Everything comes from the CLI bundle as users
 * run it: the Jinja renderer from its startup snapshot and the Python runner from its compiled
 * code, made by two `dm expand` runs in the bench's own cache directory first. The two kinds
 * alternate, `--repeat` times each; printed are medians of the expansion's wall time, the
 * renderers' CPU during it (/proc schedstat of every live descendant's threads), the main
 * process's CPU, and what starting costs the renderers in CPU up to ready (the warm-up's price),
 * with the load average. The outputs of every run must be byte-identical.
 * Run with the Node users run: ~/.cache/dm-ci/node-24.22.3/node/bin/node dist/bench/renderer-warm.js
 *        [--repeat 15] [--timings]
 * Target line: "warm/cold" of the expansion's wall time and of the renderers' CPU during it (< 1:
 * the warm start pays), and the warm-up's CPU at start beside it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { formatYaml as FormatYaml } from '../client/src/document/yaml.js';
import type { expandConfiguration as ExpandConfiguration } from '../client/src/expand/expand-configuration.js';
import type * as Sandbox from '../client/src/expand/sandbox/render-sandbox.js';
import { dmBin, isolatedEnv, repoRoot } from '../test/support/run-cli.js';

const BUNDLE = join(repoRoot, 'dist', 'bundle', 'cli');
const at = process.argv.indexOf('--repeat');
const repeat = at > 0 ? Math.max(1, Number(process.argv[at + 1]) || 1) : 15;
/** --timings: the Jinja process's CPU split by what it did (the clock reads cost it a little). */
const timings = process.argv.includes('--timings');

/** A module of the CLI bundle, by the name esbuild gave its chunk (`<name>-<hash>.js`). */
async function bundled<T>(name: string): Promise<T> {
  const file = readdirSync(BUNDLE).find((f) => new RegExp(`^${name}-[A-Z0-9]+\\.js$`).test(f));
  if (!file) throw new Error(`no chunk ${name} in ${BUNDLE}: run npm run build`);
  return (await import(pathToFileURL(join(BUNDLE, file)).href)) as T;
}

/** This process's descendants (pid → parent pid), from /proc. */
function descendants(): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  const out: number[] = [];
  const mine = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parent) {
      if (mine.has(ppid) && !mine.has(pid)) {
        mine.add(pid);
        out.push(pid);
        grew = true;
      }
    }
  }
  return out.sort((a, b) => a - b);
}

/** CPU ms of the live descendants, every thread (schedstat: ns on the CPU). */
function descendantsCpuMs(pids = descendants()): number {
  let ns = 0;
  for (const pid of pids) {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`))
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {}
  }
  return ns / 1e6;
}

const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const load = () => `load ${loadavg()[0]?.toFixed(2)}`;

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'dm-bench-renderer-warm-'));
  try {
    const wrote = spawnSync(
      process.execPath,
      [join(repoRoot, 'dist/bench/expand.js'), '--write', root, '--sizes', '100'],
      {
        encoding: 'utf8',
      },
    );
    if (wrote.status !== 0) throw new Error(`bench/expand.js --write failed: ${wrote.stderr}`);
    const dir = join(root, 'n100');
    const configPath = join(dir, 'config.yaml');
    // The startup snapshot and the runner's compiled code, as a user's later runs find them: two
    // runs of this Node in a cache directory of the bench's own, then their background builds.
    const home = await isolatedEnv();
    // Each run in its own process, not served by an expansion agent (which would outlive the bench).
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', DM_AGENT: 'off', ...home };
    for (let i = 0; i < 2; i++) {
      const run = spawnSync(process.execPath, [dmBin, 'expand', 'config.yaml', '-o', 'yaml'], {
        cwd: dir,
        env,
        encoding: 'utf8',
        maxBuffer: 1 << 26,
      });
      if (run.status !== 0) throw new Error(`dm expand failed: ${run.stderr}`);
    }
    const snapshots = join(home.XDG_CACHE_HOME as string, 'dm', 'renderer-snapshots');
    const pythonRunners = join(home.XDG_CACHE_HOME as string, 'dm', 'python-runners');
    const made = (d: string, suffix: string) =>
      existsSync(d) &&
      readdirSync(d).some((n) => n.endsWith(suffix)) &&
      !readdirSync(d).some((n) => n.endsWith('.building'));
    for (
      let waited = 0;
      waited < 120_000 && !(made(snapshots, '.blob') && made(pythonRunners, '.marshal'));
      waited += 100
    )
      await new Promise((r) => setTimeout(r, 100));
    if (!made(snapshots, '.blob') || !made(pythonRunners, '.marshal'))
      throw new Error('the startup snapshot or the compiled runner was not made in 2 minutes');

    const { RenderSandbox, startRenderersEarly } = await bundled<typeof Sandbox>('render-sandbox');
    const { expandConfiguration } = await bundled<{ expandConfiguration: typeof ExpandConfiguration }>(
      'expand-configuration',
    );
    const { formatYaml } = await bundled<{ formatYaml: typeof FormatYaml }>('yaml');
    const content = readFileSync(configPath, 'utf8');
    const options = { snapshots, pythonRunners };

    interface Run {
      readyMs: number;
      readyCpuMs: number;
      wallMs: number;
      renderersCpuMs: number;
      jinjaCpuMs: number;
      mainCpuMs: number;
      output: string;
      split: string;
    }
    /** The Jinja process among the renderers (Node's, started under the permission model). */
    const isJinja = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('permission');
      } catch {
        return false;
      }
    };
    const once = async (warm: boolean): Promise<Run> => {
      const before = new Set(descendants());
      const r0 = performance.now();
      // The early processes do not keep this process alive (their handles are unref'd): a timer does.
      const alive = setInterval(() => {}, 1000);
      await startRenderersEarly({ jinja: true, python: true }, { ...options, warm }).finally(() =>
        clearInterval(alive),
      );
      const readyMs = performance.now() - r0;
      const renderers = descendants().filter((pid) => !before.has(pid));
      const readyCpuMs = descendantsCpuMs(renderers);
      const jinja = renderers.filter(isJinja);
      const jinjaReadyCpuMs = descendantsCpuMs(jinja);
      const m0 = cpuMs();
      const t0 = performance.now();
      const sandbox = new RenderSandbox({ ...options, timings });
      try {
        const result = await expandConfiguration(
          { content, path: configPath },
          { sandbox, deployment: 'bench', pythonValues: true },
        );
        const output = formatYaml({ config: result.config, layout: result.layout });
        const wallMs = performance.now() - t0;
        const mainCpuMs = cpuMs() - m0;
        const now = descendants().filter((pid) => !before.has(pid));
        if (now.join() !== renderers.join())
          throw new Error(`the run did not take over the early processes (${renderers} → ${now})`);
        const jinjaCpuMs = descendantsCpuMs(jinja) - jinjaReadyCpuMs;
        const renderersCpuMs = descendantsCpuMs(renderers) - readyCpuMs;
        const t = sandbox.timings;
        const split = `schema ${t.jinjaSchemaMs.toFixed(1)}, render ${t.jinjaRenderMs.toFixed(1)}, YAML ${t.jinjaYamlMs.toFixed(1)}`;
        return { readyMs, readyCpuMs, wallMs, renderersCpuMs, jinjaCpuMs, mainCpuMs, output, split };
      } finally {
        sandbox.close();
      }
    };

    // The main process warm, as an agent's is after its first runs.
    for (let i = 0; i < 3; i++) await once(false);
    const runs: Record<'cold' | 'warm', Run[]> = { cold: [], warm: [] };
    const loads: number[] = [];
    for (let r = 0; r < repeat; r++) {
      for (const kind of r % 2 ? (['warm', 'cold'] as const) : (['cold', 'warm'] as const)) {
        runs[kind].push(await once(kind === 'warm'));
        loads.push(loadavg()[0] ?? 0);
      }
    }
    const outputs = new Set([...runs.cold, ...runs.warm].map((r) => r.output));
    if (outputs.size !== 1) throw new Error('the expansions did not all give the same bytes');
    if (!runs.cold[0]?.output.includes('protocol: TCP'))
      throw new Error('schema default missing from the output');

    console.log(
      `renderers started early, cold or warm, ready before the 100-resource expansion starts; Node ${process.versions.node}; medians of ${repeat} alternate runs each`,
    );
    console.log('kind   ready ms  cpu at ready  expand ms  renderers cpu (jinja, python)  main cpu');
    const row = (kind: 'cold' | 'warm') => {
      const rs = runs[kind];
      const f = (pick: (r: Run) => number) => median(rs.map(pick));
      console.log(
        `${kind.padEnd(5)} ${f((r) => r.readyMs)
          .toFixed(0)
          .padStart(9)} ${f((r) => r.readyCpuMs)
          .toFixed(1)
          .padStart(13)} ${f((r) => r.wallMs)
          .toFixed(1)
          .padStart(10)} ${f((r) => r.renderersCpuMs)
          .toFixed(1)
          .padStart(
            14,
          )} (${f((r) => r.jinjaCpuMs).toFixed(1)}, ${f((r) => r.renderersCpuMs - r.jinjaCpuMs).toFixed(1)}) ${f(
          (r) => r.mainCpuMs,
        )
          .toFixed(1)
          .padStart(9)}`,
      );
      if (timings) console.log(`      jinja: ${rs.map((r) => r.split).join('; ')}`);
      return { wall: f((r) => r.wallMs), cpu: f((r) => r.renderersCpuMs), ready: f((r) => r.readyCpuMs) };
    };
    const cold = row('cold');
    const warm = row('warm');
    console.log(
      `target: warm/cold expand wall ${(warm.wall / cold.wall).toFixed(2)}, renderers' cpu ${(warm.cpu / cold.cpu).toFixed(2)}; ` +
        `the warm-up costs ${(warm.ready - cold.ready).toFixed(0)} ms of CPU at start ` +
        `(load during the runs ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}, now ${load()})`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
