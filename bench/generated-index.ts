/**
 * Shared by the server benches: a generated index of many templates (the same every run) and a
 * latency measure.
 */
import type { BuiltIndex, IndexedTemplate } from '../server/src/indexer/build-index.js';

export const WORDS = (
  'redis postgres mysql mongo kafka zookeeper nginx ingress cache queue worker cron job batch spark hadoop ' +
  'elastic search logging metrics prometheus grafana alert network policy secret config map stateful service ' +
  'web app api gateway proxy load balancer storage volume backup restore cluster node pool autoscaler'
).split(' ');

function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

/** `count` templates of one version each, names and text from WORDS, the same for every seed-42 run. */
export function generatedIndex(count: number): BuiltIndex {
  const random = rng(42);
  const pick = () => WORDS[Math.floor(random() * WORDS.length)]!;
  const templates: IndexedTemplate[] = [];
  for (let i = 0; i < count; i++) {
    const name = `${pick()}-${pick()}-${i}`;
    const sha = i.toString(16).padStart(64, '0');
    templates.push({
      collection: `team${i % 40}`,
      name,
      latestVersion: 'v1',
      title: `${pick()} ${pick()}`,
      description: `A ${pick()} template with ${pick()} and ${pick()} support.`,
      properties: [pick(), pick(), `${pick()}Size`],
      versions: [
        {
          version: 'v1',
          kind: 'jinja',
          dir: `team${i % 40}/${name}/v1`,
          templateFile: `${name}.jinja`,
          schemaFile: null,
          hasExample: false,
          digest: `sha256:${sha}`,
          schema: null,
          files: [
            {
              path: `${name}.jinja`,
              sha256: sha,
              gitSha: sha.slice(0, 40),
              size: 1,
              content: Buffer.from('x'),
            },
          ],
        },
      ],
    });
  }
  return { templates, findings: [], registryYaml: null };
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/**
 * The longest the event loop went without a turn (what every other request waits), and the
 * process's CPU time and the wall-clock time, while `work` runs.
 */
export async function stalls(work: () => unknown): Promise<{ ms: number; stall: number; cpu: number }> {
  let longest = 0;
  let last = performance.now();
  let running = true;
  const turn = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  const cpu = process.cpuUsage();
  const t = performance.now();
  await work();
  running = false;
  longest = Math.max(longest, performance.now() - last);
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - t, stall: longest, cpu: (used.user + used.system) / 1000 };
}

/** p50/p99 in ms of `run` after 20 warm-up runs. */
export async function measure(run: () => unknown, iterations: number): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 20; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** The search benches' queries: [label, query]. */
export const SEARCH_QUERIES: readonly [string, string][] = [
  ['one-word prefix (2 letters)', 're'],
  ['one-word prefix (3 letters)', 'red'],
  ['one word', 'redis'],
  ['two words', 'redis cache'],
  ['two-word prefixes', 'post back'],
  ['rare word', 'zookeeper gateway autoscaler'],
];
