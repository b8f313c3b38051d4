/**
 * Bench for `dm render` (issue 5, "Bench"): renders N documents over 4 layers (global, region,
 * zone, site) with layering actions and substitutions, for N = 1k, 10k, 100k, and prints times,
 * documents per second and growth ratios. Baselines measured in the same run on the same
 * documents: a deep copy of every document (a floor: rendering must at least copy), and a naive
 * parent selection that scans every document for every child (what an index avoids; skipped at
 * 100k, where it would take minutes).
 *
 * Run: npx tsc -p . && node dist/bench/render.js
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { renderDocuments } from '../client/src/layer/render-documents.js';

type Doc = Record<string, unknown>;

const LAYERS = ['global', 'region', 'zone', 'site'];

function doc(schema: string, name: string, layer: string, extra: Doc, data: unknown): Doc {
  return {
    schema,
    metadata: {
      schema: 'metadata/Document/v1',
      name,
      storagePolicy: 'cleartext',
      ...extra,
      layeringDefinition: {
        abstract: false,
        layer,
        ...((extra.layeringDefinition as Doc | undefined) ?? {}),
      },
    },
    data,
  };
}

/** About n documents: chains global → region → zone → site, plus one substitution source per 100 chains. */
export function generateDocuments(n: number): Doc[] {
  const docs: Doc[] = [
    {
      schema: 'deckhand/LayeringPolicy/v1',
      metadata: { schema: 'metadata/Control/v1', name: 'layering-policy' },
      data: { layerOrder: LAYERS },
    },
  ];
  const chains = Math.floor((n - 1) / 4.01);
  const sources = Math.ceil(chains / 100);
  for (let s = 0; s < sources; s++) {
    const hosts: Doc = {};
    for (let h = 0; h < 100; h++) hosts[`host${h}`] = `10.${s % 256}.${h}.1`;
    docs.push(
      doc('bench/CommonAddresses/v1', `common-${s}`, 'global', {}, { hosts, ports: { api: 8080 + s } }),
    );
  }
  for (let i = 0; i < chains; i++) {
    const team = `team-${i % 10}`; // a label every tenth chain shares: a long posting list
    const src = `common-${Math.floor(i / 100)}`;
    const chart = 'bench/Chart/v1';
    docs.push(
      doc(
        chart,
        `app-${i}-global`,
        'global',
        { labels: { chain: `c${i}`, g: 'yes', team } },
        {
          values: {
            image: `registry.example/app-${i}:TAG`,
            replicas: 1,
            endpoint: 'http://HOST:PORT/api',
            conf: { a: 1, b: 'two', c: [1, 2, 3], d: { e: true, f: null } },
          },
          tags: ['x', 'y'],
        },
      ),
    );
    docs.push(
      doc(
        chart,
        `app-${i}-region`,
        'region',
        {
          labels: { chain: `c${i}`, r: 'yes', team },
          layeringDefinition: {
            parentSelector: { chain: `c${i}`, g: 'yes', team },
            actions: [{ method: 'merge', path: '.' }],
          },
        },
        { values: { replicas: 3, conf: { b: 'region' } } },
      ),
    );
    docs.push(
      doc(
        chart,
        `app-${i}-zone`,
        'zone',
        {
          labels: { chain: `c${i}`, z: 'yes', team },
          layeringDefinition: {
            parentSelector: { chain: `c${i}`, r: 'yes' },
            actions: [
              { method: 'merge', path: '.values' },
              { method: 'replace', path: '.tags' },
            ],
          },
          substitutions: [
            {
              src: { schema: 'bench/CommonAddresses/v1', name: src, path: '.ports.api' },
              dest: { path: '.values.port' },
            },
          ],
        },
        { values: { conf: { zone: `z${i % 7}` } }, tags: ['zone'] },
      ),
    );
    docs.push(
      doc(
        chart,
        `app-${i}`,
        'site',
        {
          labels: { chain: `c${i}`, team },
          layeringDefinition: {
            parentSelector: { chain: `c${i}`, z: 'yes' },
            actions: [
              { method: 'merge', path: '.' },
              { method: 'delete', path: '.values.conf.d' },
            ],
          },
          substitutions: [
            {
              src: { schema: 'bench/CommonAddresses/v1', name: src, path: `.hosts.host${i % 100}` },
              dest: { path: '.values.endpoint', pattern: 'HOST' },
            },
            {
              src: { schema: 'bench/CommonAddresses/v1', name: src, path: '.ports.api' },
              dest: [{ path: '.values.endpoint', pattern: 'PORT' }, { path: '.values.sitePort' }],
            },
          ],
        },
        { values: { replicas: 5 }, site: `site-${i}` },
      ),
    );
  }
  // A fixed shuffle: input order must not help.
  let seed = 12345;
  for (let i = docs.length - 1; i > 1; i--) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const j = 1 + (seed % i);
    [docs[i], docs[j]] = [docs[j] as Doc, docs[i] as Doc];
  }
  return docs;
}

/** The quadratic alternative to the label index: every child scans every document. */
function naiveParentScan(docs: readonly Doc[]): number {
  const order = new Map(LAYERS.map((l, i) => [l, i]));
  let found = 0;
  const meta = (d: Doc) => d.metadata as Doc;
  const ld = (d: Doc) => (meta(d).layeringDefinition ?? {}) as Doc;
  for (const child of docs) {
    const selector = ld(child).parentSelector as Record<string, unknown> | undefined;
    if (!selector) continue;
    let best: Doc | undefined;
    for (const p of docs) {
      if (p === child) continue;
      const labels = (meta(p).labels ?? {}) as Record<string, unknown>;
      let ok = true;
      for (const k in selector) {
        if (labels[k] !== selector[k]) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      const li = order.get(ld(p).layer as string) ?? 0;
      if (!best || li > (order.get(ld(best).layer as string) ?? 0)) best = p;
    }
    if (best) found++;
  }
  return found;
}

function time(fn: () => unknown, runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

function fmt(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}

function main(): void {
  const sizes = [1_000, 10_000, 100_000];
  renderDocuments(generateDocuments(1_000)); // warm-up
  const rows: { n: number; render: number; copy: number; naive?: number }[] = [];
  for (const size of sizes) {
    const docs = generateDocuments(size);
    const out = renderDocuments(docs);
    const sample = out.find((d) => (d.metadata as Doc).name === 'app-7') as Doc;
    const data = sample.data as { values: { endpoint: string; replicas: number } };
    if (data.values.endpoint !== 'http://10.0.7.1:8080/api' || data.values.replicas !== 5) {
      throw new Error(`bench documents rendered wrongly: ${JSON.stringify(data)}`);
    }
    const runs = size >= 100_000 ? 3 : size >= 10_000 ? 5 : 15;
    const render = time(() => renderDocuments(docs), runs);
    const copy = time(() => structuredClone(docs), runs);
    const naive = size <= 10_000 ? time(() => naiveParentScan(docs), 1) : undefined;
    rows.push({ n: docs.length, render, copy, ...(naive === undefined ? {} : { naive }) });
  }
  console.log(
    'dm render bench: 4 layers (global, region, zone, site), 3 substitutions per chain, shuffled input',
  );
  console.log('documents  render      docs/s     deep copy  render/copy  naive parent scan  scan/render');
  for (const r of rows) {
    console.log(
      [
        String(r.n).padStart(9),
        fmt(r.render).padStart(9),
        String(Math.round((r.n / r.render) * 1000)).padStart(10),
        fmt(r.copy).padStart(12),
        `${(r.render / r.copy).toFixed(2)}x`.padStart(12),
        (r.naive === undefined ? 'skipped' : fmt(r.naive)).padStart(18),
        (r.naive === undefined ? '-' : `${(r.naive / r.render).toFixed(1)}x`).padStart(12),
      ].join(' '),
    );
  }
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1] as (typeof rows)[number];
    const b = rows[i] as (typeof rows)[number];
    console.log(
      `growth ${a.n} -> ${b.n} documents (x${(b.n / a.n).toFixed(1)}): render time x${(b.render / a.render).toFixed(1)}` +
        (a.naive !== undefined && b.naive !== undefined
          ? `, naive scan x${(b.naive / a.naive).toFixed(1)}`
          : ''),
    );
  }
  const tenK = rows[1] as (typeof rows)[number];
  console.log(
    `target: 10k documents in under 1 s: ${tenK.render < 1000 ? 'met' : 'NOT met'} (${fmt(tenK.render)})`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
