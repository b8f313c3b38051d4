/**
 * Cold and warm `dm install` of a configuration with 50 distinct references against a real
 * dm-registry (issue 3): HTTP requests made and wall time. Baseline in the same run: the same 50
 * resolutions made one GET /api/v1/resolve at a time (what a client without batch resolve does).
 * Targets: cold = 1 batch resolve + only the content not in cache; warm = 0 requests, < 300 ms.
 * Run: npm run build && node dist/bench/install.js
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRegistry } from '../test/support/registry-server.js';
import { isolatedEnv, runDm } from '../test/support/run-cli.js';

const N = 50;
const NAME = 'github.com/bench/templates';

async function main(): Promise<void> {
  const registry = await mkdtemp(join(tmpdir(), 'dm-bench-reg-'));
  for (let i = 0; i < N; i++) {
    for (const v of ['v1', 'v1.0.1', 'v1.1']) {
      const dir = join(registry, `t${i}`, v);
      await mkdir(dir, { recursive: true });
      await writeFile(
        join(dir, `t${i}.jinja`),
        `resources:\n- name: {{ env["name"] }}\n  type: ConfigMap\n  properties: {data: {v: "${v}"}}\n`,
      );
      await writeFile(
        join(dir, `t${i}.jinja.schema`),
        `info: {title: t${i}}\nproperties: {size: {type: integer, default: ${i}}}\n`,
      );
      await writeFile(join(dir, 'example.yaml'), `resources:\n- name: x\n  type: t${i}.jinja\n`);
    }
  }
  const server = await startRegistry([`${registry}=${NAME}`]);
  try {
    const project = await mkdtemp(join(tmpdir(), 'dm-bench-proj-'));
    const resources = Array.from({ length: N }, (_, i) => `- name: r${i}\n  type: ${NAME}/t${i}:v1.0\n`).join(
      '',
    );
    await writeFile(join(project, 'config.yaml'), `resources:\n${resources}`);
    const env = await isolatedEnv();

    // Baseline: one request per reference.
    let start = performance.now();
    for (let i = 0; i < N; i++) {
      const r = await fetch(`${server.url}/api/v1/resolve?ref=${encodeURIComponent(`${NAME}/t${i}:v1.0`)}`);
      await r.arrayBuffer();
    }
    const baselineMs = performance.now() - start;

    let mark = server.requests().length;
    start = performance.now();
    const cold = await runDm(['install', '--registry-url', server.url, '-o', 'json'], { env, cwd: project });
    const coldMs = performance.now() - start;
    if (cold.code !== 0) throw new Error(cold.stderr);
    const coldRequests = server.requests().slice(mark);
    const seen = new Set<string>();
    for (const r of coldRequests) {
      if (seen.has(r) && process.env.DM_BENCH_DEBUG) console.log(`repeated: ${r}`);
      seen.add(r);
    }
    const result = JSON.parse(cold.stdout) as { filesFetched: number };

    mark = server.requests().length;
    const warmTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      start = performance.now();
      const warm = await runDm(['install', '--registry-url', server.url], { env, cwd: project });
      warmTimes.push(performance.now() - start);
      if (warm.code !== 0) throw new Error(warm.stderr);
    }
    const warmRequests = server.requests().slice(mark).length;
    warmTimes.sort((a, b) => a - b);
    const warmMs = warmTimes[2]!;

    const batches = coldRequests.filter((r) => r === 'POST /api/v1/resolve').length;
    console.log(`references: ${N}`);
    console.log(
      `cold install: ${coldRequests.length} HTTP requests (${batches} batch resolve + ${coldRequests.length - batches} file fetches; ${result.filesFetched} distinct files not in cache), ${coldMs.toFixed(0)} ms`,
    );
    console.log(
      `warm install: ${warmRequests} HTTP requests over 5 runs, median ${warmMs.toFixed(0)} ms end to end (target < 300 ms: ${warmMs < 300 ? 'met' : 'NOT met'})`,
    );
    console.log(
      `baseline: ${N} single resolves, one request each: ${N} requests, ${baselineMs.toFixed(0)} ms`,
    );
    console.log(`ratio resolve requests, dm install / baseline: ${(batches / N).toFixed(2)}×`);
  } finally {
    await server.stop();
  }
}

await main();
