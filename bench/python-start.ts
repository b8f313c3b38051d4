/**
 * What the Python process's operating-system boundary costs at start (issue 25 item 14;
 * docs/expansion.md, "Isolation"): the time from spawning the Python renderer to the answer of
 * its first (trivial) template, with the boundary (namespaces, pivot_root, Landlock) and without
 * it (baseline: the same runner with `_enter_boundary` a stub), started the same way (as nobody
 * when run as root), alternately in blocks, in the same run. Prints medians of wall time, the
 * children's CPU time per start (from /proc/self/stat's cutime + cstime), the ratio, and the load
 * average.
 * Run: node dist/bench/python-start.js [--repeat 40]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { PYTHON_BOUNDARY_SOURCE } from '../client/src/expand/python/boundary-source.js';
import { PYTHON_RUNNER_SOURCE } from '../client/src/expand/python/runner-source.js';
import { pythonCommand } from '../client/src/expand/sandbox/render-sandbox.js';

const argv = process.argv.slice(2);
const at = argv.indexOf('--repeat');
const repeat = at >= 0 ? Number(argv[at + 1]) : 40;
const BLOCK = 5;

const STUB = "def _enter_boundary():\n    return [], 'baseline'\n";
if (!PYTHON_RUNNER_SOURCE.includes(PYTHON_BOUNDARY_SOURCE))
  throw new Error('the runner no longer holds the boundary source');
const BASELINE = PYTHON_RUNNER_SOURCE.replace(PYTHON_BOUNDARY_SOURCE, STUB);

const REQUEST = `${JSON.stringify({ id: 1, name: 'a.py', source: 'def GenerateConfig(c):\n    return "ok"\n', context: { properties: {}, env: {} }, timeout: 10 })}\n`;

/** Children's CPU time so far, ms (only of children that have exited and been waited for). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // After "pid (comm) ": state is field 3, so cutime (16) and cstime (17) are at 13 and 14.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
}

function startOnce(source: string): Promise<{ ms: number; layers: string[] }> {
  const [cmd, args, options] = pythonCommand('python3', 512);
  const started = performance.now();
  const child = spawn(cmd, [args[0]!, args[1]!, source, ...args.slice(3)], options);
  return new Promise((resolve, reject) => {
    let out = '';
    let layers: string[] = [];
    let ms = 0;
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const message = JSON.parse(out.slice(0, nl)) as {
          ready?: boolean;
          boundary?: string[];
          ok?: boolean;
        };
        out = out.slice(nl + 1);
        if (message.ready) {
          layers = message.boundary ?? [];
          child.stdin!.write(REQUEST);
        } else if (message.ok) {
          ms = performance.now() - started;
          child.stdin!.end();
        } else reject(new Error(JSON.stringify(message)));
      }
    });
    child.on('exit', (code) =>
      code === 0 && ms > 0 ? resolve({ ms, layers }) : reject(new Error(`exit ${code}`)),
    );
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const runs = { baseline: [] as number[], boundary: [] as number[] };
const cpu = { baseline: 0, boundary: 0 };
let layers: string[] = [];
for (let i = 0; i < repeat; i += BLOCK) {
  for (const kind of ['baseline', 'boundary'] as const) {
    const before = childrenCpuMs();
    for (let j = 0; j < BLOCK; j++) {
      const r = await startOnce(kind === 'baseline' ? BASELINE : PYTHON_RUNNER_SOURCE);
      runs[kind].push(r.ms);
      if (kind === 'boundary') layers = r.layers;
    }
    cpu[kind] += childrenCpuMs() - before;
  }
}
const [b, o] = [median(runs.baseline), median(runs.boundary)];
const [cb, co] = [cpu.baseline / runs.baseline.length, cpu.boundary / runs.boundary.length];
console.log(
  `Python renderer start to first answer, ${runs.boundary.length} starts each, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(`boundary entered: ${layers.join(' + ') || 'none'}`);
console.log('                 wall ms (median)   CPU ms per start');
console.log(`baseline (guard)  ${b.toFixed(1).padStart(8)}          ${cb.toFixed(1).padStart(8)}`);
console.log(`with boundary     ${o.toFixed(1).padStart(8)}          ${co.toFixed(1).padStart(8)}`);
console.log(
  `ratio             ${(o / b).toFixed(2).padStart(8)}          ${(co / cb).toFixed(2).padStart(8)}`,
);
