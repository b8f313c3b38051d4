/**
 * `dm --version` cold start (issue 2: under 150 ms), next to bare `node -e 0` measured in the same run.
 * Run: npm run build && node dist/bench/cli-startup.js [runs]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const runs = Number(process.argv[2] ?? 30);
const root = fileURLToPath(new URL('../../', import.meta.url));

function time(args: string[]): number[] {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  }
  return times.sort((a, b) => a - b);
}

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const bare = time(['-e', '0']);
const version = time(['bin/dm.js', '--version']);
const help = time(['bin/dm.js', '--help']);
const row = (name: string, xs: number[]) =>
  `${name.padEnd(18)} p50 ${pct(xs, 50).toFixed(1).padStart(6)} ms   p90 ${pct(xs, 90).toFixed(1).padStart(6)} ms   ratio to bare node (p50) ${(pct(xs, 50) / pct(bare, 50)).toFixed(2)}×`;
console.log(`runs: ${runs}`);
console.log(row('node -e 0', bare));
console.log(row('dm --version', version));
console.log(row('dm --help', help));
console.log(
  `target: dm --version under 150 ms — ${pct(version, 50) < 150 ? 'met' : 'NOT met'} (p50 ${pct(version, 50).toFixed(1)} ms)`,
);
