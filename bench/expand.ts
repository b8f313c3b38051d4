/**
 * Expansion speed (issues 4 and 16): a generated configuration of N resources, each expanded
 * through 3 levels of templates (Jinja with a schema → Python → Jinja), by dm end to end as
 * `dm expand` does it (read the configuration, sandboxed Jinja and Python processes, YAML
 * parsing, schema defaults, layout, value references, and writing {config, layout} as YAML),
 * against the same templates expanded by Python's Jinja2 in one process (a minimal DM-style
 * expander, below, that also fills schema defaults and dumps the result). N grows 100 → 1,000 →
 * 10,000. "dm ms" is the engine in this process (modules already loaded); "cli ms" is the
 * whole `dm expand config.yaml -o yaml` process (start, module loading, expansion, YAML written to
 * stdout), the figure to hold against the reference, which is end to end too. A breakdown of
 * dm's time follows the table. With --repeat N the libyaml reference and the cli run N times each,
 * alternately, and their medians are printed (one run of each is noise on a busy machine).
 * With --busy one other process keeps a core busy for the whole run (the load of a CI machine or a
 * laptop building something), started before the first measurement and stopped after the last.
 * With --node NODE the cli runs under that Node (a path, or a supported line, 22, 24 or 26, found or
 * fetched by scripts/node-versions.mjs): users run Node >= 22 (package.json "engines"), whose
 * compile cache dm turns on (docs/client.md, "The CLI bundle"); without it, the Node running the
 * bench. Each size's cli is run twice before it is timed, as a user's later runs find dm's cache
 * directory (the compile cache, the Jinja renderer's startup snapshot: docs/expansion.md,
 * "Speed"; the bench waits for the snapshot's build). With `perf` on the PATH the CPU time of the whole process tree (children included)
 * of the cli and of the reference is printed too: on a shared machine that is the figure that
 * does not move with the load.
 * With --write DIR the bench only writes each size's files into DIR/n<N> (for profiling `dm expand`
 * there by hand) and exits.
 * Run: node dist/bench/expand.js [--sizes 100,1000,10000] [--repeat N] [--busy] [--node 22|24|PATH]
 *        [--write DIR]
 * "agent ms" is the same command served by the user's expansion agent (docs/client.md, "The
 * expansion agent"): what a user's second and later runs meet. Its CPU counts the agent's process
 * tree (its run, and the next run's rendering processes it starts after) with the client's; the
 * bench waits for the agent to be quiet before timing anything else.
 * Target line (issue 27): "agent/libyaml" at 100 resources <= 0.7 idle, <= 1.0 with --busy; <= 0.5
 * at 1,000 and 10,000.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatYaml } from '../client/src/document/yaml.js';
import {
  cpuMs,
  type ExpansionTimings,
  expandConfiguration,
  RenderSandbox,
} from '../client/src/expand/index.js';

const LEVEL1_SCHEMA = `info:
  title: level 1
properties:
  replicas: {type: integer, minimum: 1}
  port: {type: integer}
  labels: {type: object}
  protocol: {type: string, default: TCP}
required: [port]
`;

const LEVEL1 = `resources:
- name: {{ env.name }}-svc
  type: Service
  properties:
    selector: {app: {{ env.name }}}
    ports:
    - port: {{ properties.port }}
      targetPort: {{ properties.port + 1 }}
      protocol: {{ properties.protocol }}
- name: {{ env.name }}-app
  type: level2.py
  properties:
    replicas: {{ properties.replicas }}
    labels: {{ properties.labels | tojson }}
    port: {{ properties.port }}
`;

const LEVEL2 = `def GenerateConfig(context):
    name = context.env['name']
    p = context.properties
    labels = dict(p['labels'])
    labels['tier'] = 'app'
    return {'resources': [
        {'name': name + '-cm', 'type': 'ConfigMap',
         'properties': {'data': {'replicas': str(p['replicas']), 'port': str(p['port'])}}},
        {'name': name + '-deploy', 'type': 'level3.jinja',
         'properties': {'replicas': p['replicas'], 'labels': labels, 'image': 'nginx:1.25', 'port': p['port']}},
    ]}
`;

const LEVEL3 = `resources:
- name: {{ env.name }}
  type: apps/v1/Deployment
  properties:
    metadata:
      labels:
{% for k, v in properties.labels.items() %}
        {{ k }}: {{ v }}
{% endfor %}
    spec:
      replicas: {{ properties.replicas }}
      template:
        spec:
          containers:
          - name: main
            image: {{ properties.image }}
            ports:
            - containerPort: {{ properties.port }}
`;

function configuration(n: number): string {
  let out = 'imports:\n- path: level1.jinja\n- path: level2.py\n- path: level3.jinja\nresources:\n';
  for (let i = 0; i < n; i++) {
    out += `- name: r${i}\n  type: level1.jinja\n  properties: {replicas: ${1 + (i % 5)}, port: ${8000 + (i % 100)}, labels: {app: r${i}, team: t${i % 7}}}\n`;
  }
  return out;
}

/** The configuration of n resources and its templates, written into dir; returns the configuration. */
function writeFiles(dir: string, n: number): string {
  mkdirSync(dir, { recursive: true });
  const content = configuration(n);
  writeFileSync(join(dir, 'config.yaml'), content);
  writeFileSync(join(dir, 'level1.jinja'), LEVEL1);
  writeFileSync(join(dir, 'level1.jinja.schema'), LEVEL1_SCHEMA);
  writeFileSync(join(dir, 'level2.py'), LEVEL2);
  writeFileSync(join(dir, 'level3.jinja'), LEVEL3);
  return content;
}

const REFERENCE = `
import sys, time, yaml, jinja2
directory, n, which = sys.argv[1], int(sys.argv[2]), sys.argv[3]
# 'dm': yaml.safe_load's pure-Python SafeLoader, as Deployment Manager's expander used it;
# 'c': libyaml's CSafeLoader, the fastest Python can parse YAML.
Loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader) if which == 'c' else yaml.SafeLoader
def read(name):
    with open(directory + '/' + name) as f:
        return f.read()
t0 = time.perf_counter()
env = jinja2.Environment()
config = yaml.load(read('config.yaml'), Loader=Loader)
jinja = {}
python = {}
class Context(object):
    def __init__(self, properties, env):
        self.properties, self.env, self.imports = properties, env, {}
def render(resource):
    t = resource['type']
    e = {'deployment': 'bench', 'name': resource['name'], 'type': t, 'project': '', 'current_time': ''}
    props = dict(resource.get('properties') or {})
    if t == 'level1.jinja':
        for key, sub in schema['properties'].items():
            if key not in props and 'default' in sub:
                props[key] = sub['default']
    if t.endswith('.jinja'):
        if t not in jinja:
            jinja[t] = env.from_string(read(t))
        return yaml.load(jinja[t].render(properties=props, env=e, imports={}), Loader=Loader)
    if t not in python:
        scope = {}
        exec(compile(read(t), t, 'exec'), scope)
        python[t] = scope['GenerateConfig']
    return python[t](Context(props, e))
primitives = []
def expand(resources):
    layout = []
    names = set()
    for r in resources:
        if r['name'] in names:
            raise Exception('duplicate ' + r['name'])
        names.add(r['name'])
        if r['type'].endswith('.jinja') or r['type'].endswith('.py'):
            out = render(r)
            layout.append({'name': r['name'], 'type': r['type'], 'properties': r.get('properties'), 'resources': expand(out['resources'])})
        else:
            primitives.append(r)
            layout.append({'name': r['name'], 'type': r['type']})
    return layout
schema = yaml.load(read('level1.jinja.schema'), Loader=Loader)
layout = expand(config['resources'])
Dumper = getattr(yaml, 'CSafeDumper', yaml.SafeDumper) if which == 'c' else yaml.SafeDumper
text = yaml.dump({'config': {'resources': primitives}, 'layout': {'resources': layout}}, Dumper=Dumper,
                 default_flow_style=False)
t1 = time.perf_counter()
print('%d %f' % (len(primitives), (t1 - t0) * 1000))
`;

/**
 * The interpreter itself (sys.executable), not a wrapper found on PATH: a version manager's shim
 * (pyenv's is a shell script) would add its own start to every reference run.
 */
function findPython(): string | undefined {
  for (const python of ['python3', '/usr/bin/python3']) {
    const run = spawnSync(python, ['-c', 'import sys, jinja2, yaml; print(sys.executable)'], {
      encoding: 'utf8',
    });
    if (run.status === 0) return run.stdout.trim() || python;
  }
  return undefined;
}

const DM = fileURLToPath(new URL('../../bin/dm.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The Node the cli runs under: --node (a path or a supported line), else this process's. */
async function cliNode(): Promise<string> {
  const at = process.argv.indexOf('--node');
  const given = at > 0 ? process.argv[at + 1] : undefined;
  if (!given) return process.execPath;
  if (!/^\d+$/.test(given)) return given;
  const nv = (await import(pathToFileURL(join(ROOT, 'scripts', 'node-versions.mjs')).href)) as {
    ensureNode(line: string): string;
  };
  return join(nv.ensureNode(given), 'bin', 'node');
}

const hasPerf = spawnSync('perf', ['--version'], { stdio: 'ignore' }).status === 0;

/** One timed run: wall ms, and with perf the CPU ms of its whole process tree. */
interface Run {
  ms: number;
  cpuMs: number;
  stdout: string;
  stderr: string;
  status: number | null;
}

function timed(command: string, args: string[], options: Parameters<typeof spawnSync>[2]): Run {
  const [cmd, argv] = hasPerf
    ? ['perf', ['stat', '-x', ',', '-e', 'task-clock', '--', command, ...args]]
    : [command, args];
  const t0 = performance.now();
  const run = spawnSync(cmd, argv, { encoding: 'utf8', maxBuffer: 1 << 28, ...options });
  const ms = performance.now() - t0;
  let stderr = String(run.stderr ?? '');
  let cpuMs = Number.NaN;
  if (hasPerf) {
    const line = stderr.split('\n').find((l) => l.includes('task-clock'));
    if (line) {
      cpuMs = Number(line.split(',')[0]);
      stderr = stderr.replace(line, '');
    }
  }
  return { ms, cpuMs, stdout: String(run.stdout ?? ''), stderr, status: run.status };
}

/**
 * `dm expand config.yaml -o yaml` as a user runs it, with its own empty config and cache; with
 * `agent`, served by the user's expansion agent (docs/client.md, "The expansion agent"), which
 * the first such run starts.
 */
function cli(node: string, dir: string, root: string, agent: boolean): Run {
  const run = timed(node, [DM, 'expand', 'config.yaml', '-o', 'yaml'], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: root,
      XDG_CONFIG_HOME: join(root, 'config'),
      XDG_CACHE_HOME: join(root, 'cache'),
      XDG_DATA_HOME: join(root, 'data'),
      XDG_STATE_HOME: join(root, 'state'),
      DM_AGENT: agent ? 'on' : 'off',
    },
  });
  if (run.status !== 0 || !run.stdout.includes('protocol: TCP'))
    throw new Error(`dm expand failed: ${run.stderr}`);
  return run;
}

/** Clock ticks per second of /proc's CPU times (USER_HZ). */
const TICK_MS = 1000 / Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);

/** The expansion agent serving `root`'s cache (its process: `node …/agent.js <root>/cache/dm/agent/…`). */
function agentPid(root: string): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (cmd.some((a) => a.endsWith('/agent.js')) && cmd.some((a) => a.startsWith(join(root, 'cache'))))
        return Number(name);
    } catch {}
  }
  return undefined;
}

/**
 * CPU ms of a process and all its descendants, the living and the reaped (utime, stime, cutime,
 * cstime of /proc/<pid>/stat), in ticks of TICK_MS.
 */
function treeCpuMs(pid: number): number {
  const stats = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const text = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = text
        .slice(text.lastIndexOf(')') + 2)
        .split(' ')
        .map(Number);
      stats.set(Number(name), fields);
    } catch {}
  }
  const children = new Map<number, number[]>();
  for (const [p, f] of stats) {
    const parent = f[1] as number;
    children.set(parent, [...(children.get(parent) ?? []), p]);
  }
  let ticks = 0;
  const walk = (p: number, root: boolean) => {
    const f = stats.get(p);
    if (!f) return;
    // Fields after the command: state ppid … utime(11) stime(12) cutime(13) cstime(14).
    ticks += (f[11] as number) + (f[12] as number) + (root ? (f[13] as number) + (f[14] as number) : 0);
    for (const c of children.get(p) ?? []) walk(c, false);
  };
  walk(pid, true);
  return ticks * TICK_MS;
}

/**
 * Waits until the agent's process tree has used no CPU for 300 ms (it starts the next run's
 * rendering processes after each run), so that nothing of it runs while the reference is timed;
 * returns its tree's CPU ms then.
 */
async function agentQuiet(pid: number): Promise<number> {
  let last = treeCpuMs(pid);
  for (let waited = 0; waited < 30_000; waited += 300) {
    await new Promise((r) => setTimeout(r, 300));
    const now = treeCpuMs(pid);
    if (now === last) return now;
    last = now;
  }
  return last;
}

/**
 * Waits (up to 2 min) for the background builds of the Jinja renderer's snapshot and of the
 * Python runner's compiled code to end.
 */
async function snapshotMade(root: string): Promise<void> {
  const dir = join(root, 'cache', 'dm', 'renderer-snapshots');
  const runners = join(root, 'cache', 'dm', 'python-runners');
  let snapshot = false;
  let runner = false;
  for (let waited = 0; waited < 120_000 && !(snapshot && runner); waited += 100) {
    const names = existsSync(dir) ? readdirSync(dir) : [];
    snapshot = names.some((n) => n.endsWith('.blob')) && !names.some((n) => n.endsWith('.building'));
    runner = existsSync(runners) && readdirSync(runners).some((n) => n.endsWith('.marshal'));
    if (!(snapshot && runner)) await new Promise((r) => setTimeout(r, 100));
  }
  if (!snapshot)
    console.log("(the Jinja renderer's snapshot was not made: the cli runs start it from its file)");
  if (!runner) console.log("(the Python runner's compiled code was not made: the cli runs compile it)");
}

async function main(): Promise<void> {
  const sizesArg = process.argv.indexOf('--sizes');
  const sizes = sizesArg > 0 ? (process.argv[sizesArg + 1] ?? '').split(',').map(Number) : [100, 1000, 10000];
  const repeatArg = process.argv.indexOf('--repeat');
  const repeat = repeatArg > 0 ? Math.max(1, Number(process.argv[repeatArg + 1]) || 1) : 1;
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = s.length >> 1;
    return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
  };
  const writeArg = process.argv.indexOf('--write');
  if (writeArg > 0) {
    for (const n of sizes) writeFiles(join(process.argv[writeArg + 1] ?? '.', `n${n}`), n);
    return;
  }
  const python = findPython();
  const node = await cliNode();
  const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  if (!nodeVersion) throw new Error(`cannot run ${node}`);
  const root = mkdtempSync(join(tmpdir(), 'dm-bench-expand-'));
  // --busy: a process spinning on one core while everything is measured (stopped at the end).
  const busy = process.argv.includes('--busy')
    ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' })
    : undefined;
  if (busy) console.log(`one core kept busy by process ${busy.pid} during the run`);
  console.log('expand: N resources x 3 template levels (Jinja -> Python -> Jinja), 3 primitives each');
  console.log(
    'Jinja2 reference: one Python process, end to end; "safe_load" parses YAML as DM did (pure Python),',
  );
  console.log('"libyaml" with the C loader. Ratios are dm / reference (< 1: dm faster).');
  if (repeat > 1) console.log(`libyaml and cli: medians of ${repeat} alternate runs`);
  console.log(`cli under Node ${nodeVersion} (${node}); this process: Node ${process.versions.node}`);
  if (hasPerf) console.log('cpu: CPU ms of the whole process tree (perf stat task-clock), medians');
  const load = () => `load ${loadavg()[0]?.toFixed(2)}`;
  console.log(
    '     N   dm ms  dm us/res  safe_load ms  ratio  libyaml ms  ratio   cli ms  cli/libyaml agent ms  agent/libyaml' +
      (hasPerf ? '  libyaml cpu  cli cpu  cpu ratio  agent cpu  cpu ratio' : '') +
      '  load',
  );
  const breakdowns: string[] = [];
  try {
    for (const n of sizes) {
      const dir = join(root, `n${n}`);
      const content = writeFiles(dir, n);
      // End to end, including starting the rendering processes and writing the output.
      const timings: ExpansionTimings = { configurationMs: 0, outputYamlMs: 0, referencesMs: 0 };
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const sandbox = new RenderSandbox({ timings: true });
      const result = await expandConfiguration(
        { content, path: join(dir, 'config.yaml') },
        { sandbox, deployment: 'bench', timings, pythonValues: true },
      );
      const s0 = cpuMs();
      const output = formatYaml({ config: result.config, layout: result.layout });
      const serialiseMs = cpuMs() - s0;
      sandbox.close();
      const dmMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      if (!output.includes('protocol: TCP')) throw new Error('schema default missing from the output');
      if (result.config.resources.length !== 3 * n)
        throw new Error(`expected ${3 * n} primitives, got ${result.config.resources.length}`);
      const reference = (which: string): Run => {
        if (!python) return { ms: Number.NaN, cpuMs: Number.NaN, stdout: '', stderr: '', status: 0 };
        // End to end too: interpreter start and imports included.
        const run = timed(python, ['-c', REFERENCE, dir, String(n), which], {});
        if (run.status !== 0) throw new Error(`reference failed: ${run.stderr}`);
        const [count] = run.stdout.trim().split(' ');
        if (Number(count) !== 3 * n) throw new Error(`reference produced ${count} primitives`);
        return run;
      };
      const safeMs = reference('dm').ms;
      // As a user's later runs: dm's cache directory is filled (not timed): the compile cache, and
      // the Jinja renderer's snapshot, which the second run has made in the background.
      cli(node, dir, root, false);
      cli(node, dir, root, false);
      await snapshotMade(root);
      // The agent: the first run starts it (as it exits); the next ones find it.
      cli(node, dir, root, true);
      let agent: number | undefined;
      for (let waited = 0; waited < 30_000 && agent === undefined; waited += 100) {
        agent = agentPid(root);
        if (agent === undefined) await new Promise((r) => setTimeout(r, 100));
      }
      if (agent === undefined) throw new Error('the expansion agent did not start');
      cli(node, dir, root, true);
      await agentQuiet(agent);
      // The libyaml reference, the whole `dm expand` process, and `dm expand` served by the
      // agent, in turn, `repeat` times each; the agent's CPU (its run and the next run's
      // rendering processes it starts after) is counted with its client's.
      const cRuns: Run[] = [];
      const cliRuns: Run[] = [];
      const agentRuns: Run[] = [];
      const clientCpus: number[] = [];
      for (let r = 0; r < repeat; r++) {
        cRuns.push(reference('c'));
        cliRuns.push(cli(node, dir, root, false));
        const before = treeCpuMs(agent);
        const run = cli(node, dir, root, true);
        const agentTree = (await agentQuiet(agent)) - before;
        clientCpus.push(run.cpuMs);
        agentRuns.push({ ...run, cpuMs: run.cpuMs + agentTree });
      }
      if (agentPid(root) !== agent) throw new Error('the expansion agent stopped during the runs');
      const cMs = median(cRuns.map((r) => r.ms));
      const cliMs = median(cliRuns.map((r) => r.ms));
      const agentMs = median(agentRuns.map((r) => r.ms));
      const cCpu = median(cRuns.map((r) => r.cpuMs));
      const cliCpu = median(cliRuns.map((r) => r.cpuMs));
      const agentCpu = median(agentRuns.map((r) => r.cpuMs));
      const perRes = (dmMs * 1000) / n;
      console.log(
        `${String(n).padStart(6)} ${dmMs.toFixed(0).padStart(7)} ${perRes.toFixed(0).padStart(10)} ${safeMs.toFixed(0).padStart(13)} ${(dmMs / safeMs).toFixed(2).padStart(6)} ${cMs.toFixed(0).padStart(11)} ${(dmMs / cMs).toFixed(2).padStart(6)} ${cliMs.toFixed(0).padStart(8)} ${(cliMs / cMs).toFixed(2).padStart(12)} ${agentMs.toFixed(0).padStart(8)} ${(agentMs / cMs).toFixed(2).padStart(14)}` +
          (hasPerf
            ? `${cCpu.toFixed(0).padStart(13)}${cliCpu.toFixed(0).padStart(9)}${(cliCpu / cCpu).toFixed(2).padStart(11)}${agentCpu.toFixed(0).padStart(11)}${(agentCpu / cCpu).toFixed(2).padStart(11)}`
            : '') +
          `  ${load()}`,
      );
      const mainMs = (cpu.user + cpu.system) / 1000;
      const measured = timings.configurationMs + timings.outputYamlMs + timings.referencesMs + serialiseMs;
      const t = sandbox.timings;
      if (hasPerf)
        breakdowns.push(
          `${String(n).padStart(6)}  served by the agent: the client process (Node's start, connection, output) ${median(clientCpus).toFixed(0)} ms CPU, ` +
            `the agent's tree (the run, and the next run's rendering processes started after it) ${(agentCpu - median(clientCpus)).toFixed(0)}`,
        );
      breakdowns.push(
        `${String(n).padStart(6)}  main: parse ${timings.configurationMs.toFixed(0)}, ` +
          `python-output YAML ${timings.outputYamlMs.toFixed(0)}, references ${timings.referencesMs.toFixed(0)}, ` +
          `serialise ${serialiseMs.toFixed(0)}, other (IPC, layout) ${Math.max(0, mainMs - measured).toFixed(0)} ` +
          `[cpu ${mainMs.toFixed(0)}]; jinja process: schema ${t.jinjaSchemaMs.toFixed(0)}, render ${t.jinjaRenderMs.toFixed(0)}, YAML parse ${t.jinjaYamlMs.toFixed(0)}; ` +
          `python process: GenerateConfig ${t.pythonRunMs.toFixed(0)}, json ${t.pythonEncodeMs.toFixed(0)}`,
      );
    }
    if (!python) console.log('(no Python with jinja2 and yaml: reference not run)');
    console.log("\nwhere dm's time goes (CPU ms of each process's own work; the three processes overlap):");
    for (const line of breakdowns) console.log(line);
    console.log(
      `\ntarget (issue 27): agent/libyaml (what a user's second and later runs meet) at 100 resources <= 0.7 idle, <= 1.0 with --busy; <= 0.5 at 1,000 and 10,000 (${load()})`,
    );
  } finally {
    busy?.kill();
    const agent = agentPid(root);
    if (agent !== undefined) process.kill(agent);
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
