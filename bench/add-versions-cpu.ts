/**
 * Adding versions on SQLite, in-process CPU (docs/server.md "Speed of the store"): the generated
 * 10,000-version registry (bench/generated-versions.ts) added to a fresh database (first import)
 * and added again (re-imports that add nothing, several a round), by this tree's addVersions and by a baseline
 * tree's (built beside it), alternating, in one process. CPU is process.cpuUsage (user + system)
 * around the synchronous call; medians of the rounds, each with the load average.
 * Target: SQLite add-versions CPU ≤ 1.0× the per-dialect code (the baseline: the commit before
 * 4134633, which wrote SQLite's add-versions apart; build it in a clone and give its root).
 * Usage: node dist/bench/add-versions-cpu.js <baseline repo root, built>[,<more roots>] [versions, default 10000] [rounds, default 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AddedRegistry, AddedVersion } from '../server/src/store/contract.js';
import { generatedVersions } from './generated-versions.js';

interface Impl {
  name: string;
  openStore(file: string): { close(): void };
  addVersions(
    store: unknown,
    registry: AddedRegistry,
    versions: readonly AddedVersion[],
    content: (sha: string) => Buffer | undefined,
  ): { added: number; unchanged: number };
}

async function load(name: string, root: string): Promise<Impl> {
  const at = (path: string) =>
    pathToFileURL(join(root, 'dist', 'server', 'src', 'store', 'sqlite', path)).href;
  const open = await import(at('open.js'));
  const add = await import(at('add-versions.js'));
  return { name, openStore: open.openStore, addVersions: add.addVersions };
}

/** Re-imports per round, alternating between the trees: each is short, so several make a figure. */
const REIMPORTS = 9;
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const cpuMs = (f: () => void) => {
  const start = process.cpuUsage();
  f();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

async function main(): Promise<void> {
  const baseRoot = process.argv[2];
  if (!baseRoot)
    throw new Error('usage: node dist/bench/add-versions-cpu.js <baseline repo root> [versions] [rounds]');
  const count = Number(process.argv[3] ?? 10_000);
  const rounds = Number(process.argv[4] ?? 5);
  const here = resolve(fileURLToPath(new URL('../..', import.meta.url)));
  // More trees to compare, after the baseline: `<baseline root>,<root>,…` (each named by its folder).
  const [base, ...more] = baseRoot.split(',');
  const impls = [await load('this tree', here), await load('baseline', resolve(base!))];
  for (const root of more) impls.push(await load(basename(root), resolve(root)));
  const { versions, content } = generatedVersions(count);
  const registry: AddedRegistry = {
    name: 'bench.example/generated/templates',
    sourceType: 'bundle',
    source: 'bench',
    visibility: 'public',
    commit: null,
  };
  const dir = mkdtempSync(join(tmpdir(), 'bench-add-versions-'));
  const figures = new Map(impls.map((i) => [i.name, { first: [] as number[], again: [] as number[] }]));
  const add = (impl: Impl, store: unknown) =>
    impl.addVersions(store, registry, versions, (sha) => content.get(sha));
  try {
    for (let round = 0; round < rounds; round++) {
      // Alternate which goes first, so a drift in the machine's load falls on both alike.
      const order = (i: number) => (i % 2 === 0 ? impls : [...impls].reverse());
      const stores = new Map(
        impls.map((impl) => [
          impl.name,
          impl.openStore(join(dir, `r${round}-${impl.name.replace(/\W/g, '')}.db`)),
        ]),
      );
      try {
        for (const impl of order(round)) {
          let first = { added: 0 };
          const ms = cpuMs(() => {
            first = add(impl, stores.get(impl.name));
          });
          if (first.added !== count) throw new Error(`${impl.name}: added ${first.added} of ${count}`);
          figures.get(impl.name)!.first.push(ms);
        }
        for (let i = 0; i < REIMPORTS; i++) {
          for (const impl of order(round + i)) {
            let again = { added: 0, unchanged: 0 };
            const ms = cpuMs(() => {
              again = add(impl, stores.get(impl.name));
            });
            if (again.added !== 0 || again.unchanged !== count) {
              throw new Error(
                `${impl.name}: a re-import added ${again.added} (${again.unchanged} unchanged)`,
              );
            }
            figures.get(impl.name)!.again.push(ms);
          }
        }
      } finally {
        for (const store of stores.values()) store.close();
      }
      console.log(
        `round ${round + 1}: ${impls
          .map((impl) => {
            const f = figures.get(impl.name)!;
            return `${impl.name} first import ${f.first.at(-1)!.toFixed(0)} ms CPU, re-imports median ${median(f.again.slice(-REIMPORTS)).toFixed(1)} ms`;
          })
          .join('; ')} (load ${loadavg()[0]!.toFixed(2)})`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const baseline = figures.get('baseline')!;
  for (const kind of ['first', 'again'] as const) {
    const b = median(baseline[kind]);
    for (const impl of impls.filter((i) => i.name !== 'baseline')) {
      const a = median(figures.get(impl.name)![kind]);
      console.log(
        `SQLite add-versions CPU (${impl.name}), ${kind === 'first' ? 'first import' : 'a re-import adding nothing'} of ${count} versions, median of ${kind === 'first' ? rounds : rounds * REIMPORTS}: ${a.toFixed(kind === 'first' ? 0 : 1)} ms vs baseline ${b.toFixed(kind === 'first' ? 0 : 1)} ms = ${(a / b).toFixed(2)}× (target ≤ 1.0×; load ${loadavg()[0]!.toFixed(2)})`,
      );
    }
  }
}

await main();
