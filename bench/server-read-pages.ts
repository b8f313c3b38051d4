/**
 * One page of a registry's templates and of a template's versions (docs/server.md "Reads, written
 * once"): the paged reads the pages make (`templatesPage`, `versionsPage` and `version`) against
 * the whole-list reads they made before (`templates`, `versions`, then a slice), measured in the
 * same run, alternating, over the same registry indexed by the real sync: on SQLite, and on
 * PostgreSQL when it is installed (a private cluster; the database's own CPU is not in this
 * process's figure, so wall time is printed too). Figures: this process's CPU and wall ms per page
 * read, median of the rounds, and the ratio paged / whole.
 * Usage: node dist/bench/server-read-pages.js [templates, default 5000] [versions, default 2000]
 * The target lines start `TARGET LINE` (target: paged / whole < 1 for both lists; the load average
 * is printed with them).
 */
import { loadavg } from 'node:os';
import { ROWS_PER_PAGE } from '../server/src/pages/pieces.js';
import type { ReadStore } from '../server/src/store/contract.js';
import { DIALECTS, type DialectTestServer, testServerOn } from '../test/server/helpers.js';
import { listedRegistry } from '../test/server/listed-registry.js';

const numbers = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const TEMPLATES = Number(numbers[0] ?? 5000);
const VERSIONS = Number(numbers[1] ?? 2000);
const ROUNDS = 7;
const CALLS = 20;

function registryDir(): string {
  return listedRegistry(
    Array.from({ length: TEMPLATES }, (_, i) => `t${i}`),
    Array.from({ length: VERSIONS }, (_, i) => `v1.${Math.floor(i / 100)}.${i % 100}`),
  );
}

/** CPU and wall ms per call of `read`, CALLS calls. */
async function measure(read: () => Promise<unknown>): Promise<{ cpu: number; wall: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) await read();
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / 1000 / CALLS, wall: (performance.now() - start) / CALLS };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function compare(
  label: string,
  whole: () => Promise<unknown>,
  paged: () => Promise<unknown>,
): Promise<void> {
  const w: { cpu: number; wall: number }[] = [];
  const p: { cpu: number; wall: number }[] = [];
  await whole();
  await paged();
  for (let round = 0; round < ROUNDS; round++) {
    // Each round's order alternates.
    if (round % 2 === 0) {
      w.push(await measure(whole));
      p.push(await measure(paged));
    } else {
      p.push(await measure(paged));
      w.push(await measure(whole));
    }
  }
  const wc = median(w.map((x) => x.cpu));
  const pc = median(p.map((x) => x.cpu));
  const ww = median(w.map((x) => x.wall));
  const pw = median(p.map((x) => x.wall));
  console.log(
    `TARGET LINE ${label}: whole ${wc.toFixed(2)} ms CPU / ${ww.toFixed(2)} ms wall, paged ${pc.toFixed(2)} ms CPU / ${pw.toFixed(2)} ms wall; ratio paged / whole CPU ${(pc / wc).toFixed(3)}, wall ${(pw / ww).toFixed(3)} (target < 1); load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

async function main(): Promise<void> {
  const dir = registryDir();
  for (const dialect of DIALECTS) {
    let s: DialectTestServer | undefined;
    try {
      s = await testServerOn(dialect);
      const row = await s.service.add({ source: dir, name: 'github.com/acme/bench', visibility: 'public' });
      const outcome = await s.service.sync(row.id, 'manual');
      if (outcome.status !== 'succeeded')
        throw new Error(`indexing: ${outcome.error?.message ?? outcome.status}`);
      const reads: ReadStore = s.service.data.reads;
      const id = row.id;
      console.log(
        `${dialect}: ${TEMPLATES + 1} templates, ${VERSIONS} versions of one; page 2 of ${ROWS_PER_PAGE}`,
      );
      await compare(
        `${dialect} registry page templates`,
        async () => (await reads.templates(id)).slice(ROWS_PER_PAGE, 2 * ROWS_PER_PAGE),
        () => reads.templatesPage(id, 2, ROWS_PER_PAGE),
      );
      await compare(
        `${dialect} template page versions`,
        async () => {
          const all = await reads.versions(id, '', 'many');
          return [all[0], all.slice(ROWS_PER_PAGE, 2 * ROWS_PER_PAGE)];
        },
        async () => [
          await reads.version(id, '', 'many', 'v1.19.99'),
          await reads.versionsPage(id, '', 'many', 2, ROWS_PER_PAGE),
        ],
      );
    } finally {
      await s?.close();
    }
  }
}

await main();
