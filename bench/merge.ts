/**
 * The merge bench of issue 5 (docs/merging.md "How dm is checked against cloud-init"): two documents of ~110,000 nodes (10 × 10 × 100
 * = 10,000 leaf keys at depth 3, and a 1,000-item list in each of the 100 depth-2 maps; B overlaps
 * half of A's leaves and adds 5,000 new ones), merged with
 * `list(append)+dict(no_replace,recurse_list)+str()`. One iteration = building the mergers +
 * merge(merge({}, A), B), as in the spec's table. cloud-init's own Python merger runs on the same
 * input in the same run (test/support/cloud-init.sh must have been run).
 *
 * Then end to end, as a user meets it (issue 10): `dm merge --as raw a.yaml b.yaml --merge-how …`
 * in process — parse both YAML texts, merge, serialize the result as YAML — against cloud-init run
 * the same way (its own safeyaml.load, the mergers, safeyaml.dumps), and against PyYAML's C loader
 * and dumper as a stricter baseline. The target is ≥ 3× cloud-init.
 * Run: npm run build && node dist/bench/merge.js [iterations] [end-to-end iterations]
 */
import {
  buildMerger,
  formatMergedYaml,
  type LoadedDocument,
  mergeLoadedDocuments,
  parseMergeDocuments,
  parseMergeHowString,
  toMergeValue,
  toPlainValue,
} from '../client/src/merge/index.js';
import { CloudInitReference, encodeForPython, findCloudInit } from '../test/merge/cloud-init-reference.js';

const ITERATIONS = Number(process.argv[2] ?? 100);
const E2E_ITERATIONS = Number(process.argv[3] ?? 5);
const STRATEGY = 'list(append)+dict(no_replace,recurse_list)+str()';

function buildDocument(which: 'A' | 'B'): Map<string, unknown> {
  const top = new Map<string, unknown>();
  for (let i = 0; i < 10; i++) {
    const middle = new Map<string, unknown>();
    for (let j = 0; j < 10; j++) {
      const leaves = new Map<string, unknown>();
      // A: leaves 0..99; B: leaves 50..149 (half of A's, and 50 new ones per map: 5,000 in all).
      const first = which === 'A' ? 0 : 50;
      for (let k = first; k < first + 100; k++) leaves.set(`leaf${k}`, `${which}-${i}-${j}-${k}`);
      leaves.set(
        'items',
        Array.from({ length: 1000 }, (_, n) => `${which}-item-${n}`),
      );
      middle.set(`m${j}`, leaves);
    }
    top.set(`t${i}`, middle);
  }
  return top;
}

function countNodes(value: unknown): number {
  if (value instanceof Map) return 1 + [...value.values()].reduce((n: number, v) => n + countNodes(v), 0);
  if (Array.isArray(value)) return 1 + value.reduce((n: number, v) => n + countNodes(v), 0);
  return 1;
}

function stats(times: number[]): { median: number; mean: number } {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    median: sorted[Math.floor(sorted.length / 2)]!,
    mean: times.reduce((a, b) => a + b, 0) / times.length,
  };
}

function time(fn: () => unknown, iterations: number, warmUp = 30): number[] {
  for (let i = 0; i < warmUp; i++) fn(); // warm up: steady state, after the JIT has compiled the mergers
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times;
}

const a = buildDocument('A');
const b = buildDocument('B');
console.log(
  `documents: A ${countNodes(a)} nodes, B ${countNodes(b)} nodes; strategy ${STRATEGY}; ${ITERATIONS} iterations`,
);

const once = () => {
  const merge = buildMerger(parseMergeHowString(STRATEGY));
  return merge(merge(new Map(), a), b);
};
const merged = once() as Map<string, Map<string, Map<string, unknown>>>;
const sample = merged.get('t0')!.get('m0')!;
console.log(
  `check: t0.m0 has ${sample.size - 1} leaves and ${(sample.get('items') as unknown[]).length} items (expect 150 and 2000)`,
);

const dm = stats(time(once, ITERATIONS));
console.log(
  `dm engine (Maps)                       median ${dm.median.toFixed(2).padStart(8)} ms  mean ${dm.mean.toFixed(2).padStart(8)} ms`,
);

const plainA = toPlainValue(a);
const plainB = toPlainValue(b);
const withConversion = stats(
  time(
    () => {
      const merge = buildMerger(parseMergeHowString(STRATEGY));
      return toPlainValue(merge(merge(new Map(), toMergeValue(plainA)), toMergeValue(plainB)));
    },
    Math.max(10, Math.floor(ITERATIONS / 5)),
  ),
);
console.log(
  `dm incl. plain-object conversion       median ${withConversion.median.toFixed(2).padStart(8)} ms  mean ${withConversion.mean.toFixed(2).padStart(8)} ms`,
);

let python: { median: number; mean: number } | undefined;
try {
  const reference = new CloudInitReference(findCloudInit());
  const answer = await reference.request({
    mode: 'bench',
    merge_how: STRATEGY,
    a: encodeForPython(a),
    b: encodeForPython(b),
    iterations: ITERATIONS,
  });
  reference.close();
  python = stats((answer.seconds as number[]).map((s) => s * 1000));
  console.log(
    `cloud-init (Python) merger             median ${python.median.toFixed(2).padStart(8)} ms  mean ${python.mean.toFixed(2).padStart(8)} ms`,
  );
} catch (error) {
  console.log(`cloud-init not measured: ${error instanceof Error ? error.message : String(error)}`);
}
if (python) {
  console.log(
    `ratio cloud-init / dm (median): ${(python.median / dm.median).toFixed(1)}× (target ≥ 3×; higher is better)`,
  );
  console.log(
    `ratio cloud-init / dm incl. conversion: ${(python.median / withConversion.median).toFixed(1)}×`,
  );
}

// End to end: YAML text in, YAML text out, as `dm merge --as raw` does it (the files read aside).
const aText = formatMergedYaml(a);
const bText = formatMergedYaml(b);
const endToEnd = () => {
  const loaded: LoadedDocument[] = [
    { document: parseMergeDocuments(aText, 'a.yaml')[0], file: 'a.yaml', position: 1, source: 'a.yaml' },
    { document: parseMergeDocuments(bText, 'b.yaml')[0], file: 'b.yaml', position: 1, source: 'b.yaml' },
  ];
  return formatMergedYaml(mergeLoadedDocuments(loaded, { as: 'raw', mergeHow: STRATEGY }).result);
};
const written = endToEnd();
console.log(
  `\nend to end: a.yaml ${(aText.length / 1e6).toFixed(1)} MB + b.yaml ${(bText.length / 1e6).toFixed(1)} MB → ${(written.length / 1e6).toFixed(1)} MB of YAML; ${E2E_ITERATIONS} iterations`,
);
const dmE2e = stats(time(endToEnd, E2E_ITERATIONS, 2));
console.log(
  `dm merge (parse → merge → serialize)   median ${dmE2e.median.toFixed(2).padStart(8)} ms  mean ${dmE2e.mean.toFixed(2).padStart(8)} ms`,
);
for (const libyaml of [false, true]) {
  try {
    const reference = new CloudInitReference(findCloudInit());
    const answer = await reference.request({
      mode: 'bench_e2e',
      merge_how: STRATEGY,
      a_text: aText,
      b_text: bText,
      iterations: E2E_ITERATIONS,
      libyaml,
    });
    reference.close();
    if (!Array.isArray(answer.seconds)) throw new Error(JSON.stringify(answer).slice(0, 300));
    const theirs = stats((answer.seconds as number[]).map((s) => s * 1000));
    const label = libyaml ? 'PyYAML C loader/dumper + mergers    ' : 'cloud-init (safeyaml load/dumps)    ';
    console.log(
      `${label}   median ${theirs.median.toFixed(2).padStart(8)} ms  mean ${theirs.mean.toFixed(2).padStart(8)} ms`,
    );
    console.log(
      `ratio ${libyaml ? 'PyYAML C' : 'cloud-init'} / dm end to end (median): ${(theirs.median / dmE2e.median).toFixed(1)}×${
        libyaml ? ' (a faster baseline than cloud-init itself runs)' : ' (target ≥ 3×; higher is better)'
      }`,
    );
  } catch (error) {
    console.log(
      `cloud-init end to end not measured: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
