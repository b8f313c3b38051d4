#!/usr/bin/env node
// Writes the table of error codes in docs/errors.md from client/src/error-codes.ts (compiled:
// run `npm run build` first). A test checks that the two list the same codes.
import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
const { ERROR_CODES, categoriesOf } = await import(`${root}dist/client/src/error-codes.js`);
const { exitCodeOfCategory, httpStatusOfCategory } = await import(`${root}dist/client/src/error.js`);

const rows = Object.keys(ERROR_CODES).map((code) => {
  const categories = categoriesOf(code);
  const join = (values) => [...new Set(values)].join(' or ');
  return `| \`${code}\` | ${categories.length > 4 ? `${categories[0]} (or the cause's)` : join(categories)} | ${
    categories.length > 4
      ? `${exitCodeOfCategory(categories[0])} (or the cause's)`
      : join(categories.map(exitCodeOfCategory))
  } | ${
    categories.length > 4
      ? `${httpStatusOfCategory(categories[0])} (or the cause's)`
      : join(categories.map(httpStatusOfCategory))
  } | ${ERROR_CODES[code].meaning.replaceAll('|', '\\|')} |`;
});
const table = [
  '| Code | Category | Exit code | HTTP status | Meaning |',
  '|---|---|---|---|---|',
  ...rows,
].join('\n');
const path = `${root}docs/errors.md`;
const doc = readFileSync(path, 'utf8');
const start = '<!-- codes:start -->';
const end = '<!-- codes:end -->';
const a = doc.indexOf(start);
const b = doc.indexOf(end);
if (a < 0 || b < a) throw new Error(`${path} lacks the ${start} … ${end} markers`);
writeFileSync(path, `${doc.slice(0, a + start.length)}\n${table}\n${doc.slice(b)}`);
console.log(`docs/errors.md: ${rows.length} codes`);
