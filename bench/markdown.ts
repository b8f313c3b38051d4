/**
 * The pages' Markdown on hostile READMEs of 64 KiB (docs/pages.md, "Markdown") against a plain
 * README of the same size, measured in one run: the median time of each, and its ratio to the
 * plain one. With `--before`, the renderer before its scans were made linear (the differential
 * test's oracle, test/pages/markdown-reference.tsx) is measured beside it, except on the heading
 * and list item texts, where it takes hours (cubic) and seconds (quadratic).
 * Usage: node dist/bench/markdown.js [--before] [rounds, default 15]
 */
import { MAX_MARKDOWN_BYTES, Markdown } from '../server/src/pages/markdown.js';
import { ReferenceMarkdown } from '../test/pages/markdown-reference.js';

const before = process.argv.includes('--before');
const rounds = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 15);
const size = MAX_MARKDOWN_BYTES;
const fill = (unit: string, n = size) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

const texts: [name: string, text: string, before?: string][] = [
  ['plain README (baseline)', fill('Plain words of a README, with sentences.\n')],
  ['opening brackets', fill('[')],
  ['images', fill('![')],
  ['nested brackets', fill('[', size / 2) + fill(']', size / 2)],
  ['unclosed links', fill('[a](')],
  ['spaces in a destination', fill(`[a](${' '.repeat(2000)}x`)],
  ['emphasis never closed', fill('*a ')],
  ['multi-byte characters (cut)', fill('中')],
  ['spaces in a heading', `${fill(`# a${' '.repeat(size)}`, size - 1)}b`, 'hours (cubic)'],
  ['spaces in a list item', `${fill(`- ${' '.repeat(size)}`, size - 3)}x\u2028y`, 'seconds (quadratic)'],
];

async function median(render: (text: string) => Promise<unknown>, text: string): Promise<number> {
  const times: number[] = [];
  for (let k = 0; k < rounds; k++) {
    const start = process.hrtime.bigint();
    await render(text);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const now = (text: string) => Promise.resolve(Markdown({ text }).toString());
const old = (text: string) => Promise.resolve(ReferenceMarkdown({ text }).toString());
for (const [, text] of texts) await now(text);
const base = await median(now, texts[0]![1]);
const baseBefore = before ? await median(old, texts[0]![1]) : 0;
console.log(`64 KiB texts, median of ${rounds}${before ? '; before: the previous renderer' : ''}`);
for (const [name, text, slow] of texts) {
  const ms = await median(now, text);
  let line = `${name.padEnd(30)} ${ms.toFixed(1).padStart(7)} ms  ${(ms / base).toFixed(1).padStart(5)}x plain`;
  if (before) {
    const was = slow ? undefined : await median(old, text);
    line +=
      was === undefined
        ? `   before: not run (${slow})`
        : `   before: ${was.toFixed(1).padStart(7)} ms  ${(was / baseBefore).toFixed(1).padStart(6)}x plain`;
  }
  console.log(line);
}
