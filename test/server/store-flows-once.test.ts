/**
 * The store's read–decide–write flows are written once (docs/server.md "Flows, written once"):
 * the first-seen record, the checksum log's hash store, the acceptance, adding versions and the
 * mirror's queries live in the shared modules of server/src/store, which both runners drive. This
 * scan keeps their SQL from coming back into the dialect folders, and keeps the dialect's list
 * parameter and locks declared in the runners only.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const STORE = join(process.cwd(), 'server', 'src', 'store');

/** Every .ts file of the dialect folders but the tests, with its text. */
function dialectFiles(): { name: string; text: string }[] {
  const files: { name: string; text: string }[] = [];
  for (const dialect of ['sqlite', 'postgres']) {
    const dir = join(STORE, dialect);
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
      files.push({ name: `${dialect}/${file}`, text: readFileSync(join(dir, file), 'utf8') });
    }
  }
  return files;
}

/** `name: match` for each file (other than `except`) whose text matches `pattern`. */
function found(pattern: RegExp, except: (name: string) => boolean = () => false): string[] {
  const hits: string[] = [];
  for (const { name, text } of dialectFiles()) {
    if (except(name)) continue;
    const m = pattern.exec(text);
    if (m) hits.push(`${name}: ${m[0]}`);
  }
  return hits;
}

describe('the store flows are written once', () => {
  it('reads the dialect folders', () => {
    const names = dialectFiles().map((f) => f.name);
    assert.ok(names.includes('sqlite/runner.ts') && names.includes('postgres/runner.ts'), names.join(', '));
  });

  it('no dialect file touches the first-seen record, quarantines or the checksum log (first-seen.ts, checksum-log.ts, quarantine.ts do)', () => {
    // schema.ts declares the tables; nothing else in a dialect folder names them in SQL.
    const sql =
      /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM|FROM|JOIN)\s+(first_seen|quarantines|log_hashes|log_state|log_checkpoints)\b/i;
    assert.deepEqual(
      found(sql, (name) => name.endsWith('/schema.ts')),
      [],
    );
  });

  it('no dialect file adds versions or marks them removed upstream (add-versions.ts, mirror-queries.ts do)', () => {
    const sql = /\bremoved_upstream_at\s*=|\bINSERT\s+INTO\s+(registries|version_files)\b.*VALUES\s*\(\$/is;
    assert.deepEqual(found(sql), []);
    // The swap writes index rows; only the swap and SQLite's prepared index writes may.
    const rows = /\bINSERT\s+INTO\s+(versions|templates|files)\b/i;
    assert.deepEqual(
      found(rows, (name) => /\/(swap-index|index-writes)\.ts$/.test(name)),
      [],
    );
  });

  it("a list parameter and a key lock are declared by the dialect's runner, nowhere else", () => {
    const fragments = /\b(json_each|jsonb_array_elements)\b|pg_advisory_xact_lock\(hashtext/;
    assert.deepEqual(
      found(fragments, (name) => name.endsWith('/runner.ts')),
      [],
    );
  });

  it('a list parameter comes first in its statement, the tables after it with CROSS JOIN (sql.ts says why)', () => {
    const hits: string[] = [];
    for (const file of readdirSync(STORE).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
      const text = readFileSync(join(STORE, file), 'utf8');
      const m = /\bJOIN\s+\$\{\w+\.list\(/.exec(text);
      if (m) hits.push(`${file}: ${m[0]}`);
    }
    for (const { name, text } of dialectFiles()) {
      const m = /\bJOIN\s+\$\{\w+\.list\(/.exec(text);
      if (m) hits.push(`${name}: ${m[0]}`);
    }
    assert.deepEqual(hits, []);
  });

  it('the reads are written once (read-queries.ts): a dialect adds only its search', () => {
    // The ReadStore's methods, from the contract; the search's three are each dialect's own.
    const contract = readFileSync(join(STORE, 'contract.ts'), 'utf8');
    const body = /export interface ReadStore \{([\s\S]*?)\n\}/.exec(contract)?.[1] ?? '';
    const methods = [...body.matchAll(/^ {2}(\w+)\(/gm)].map((m) => m[1]!);
    const search = ['search', 'warm', 'searchCounters'];
    assert.ok(methods.includes('versions') && methods.includes('templatesPage'), methods.join(', '));
    for (const dialect of ['sqlite', 'postgres']) {
      const text = readFileSync(join(STORE, dialect, 'reads.ts'), 'utf8');
      assert.match(text, /extends SqlReads\b/, `${dialect}/reads.ts`);
      const defined = methods.filter(
        (m) => !search.includes(m) && new RegExp(`^ {2}(async )?${m}\\(`, 'm').test(text),
      );
      assert.deepEqual(defined, [], `${dialect}/reads.ts defines reads that read-queries.ts has`);
      // What SQL a dialect's reads.ts holds reads only the search's tables.
      const tables = [...text.matchAll(/\b(?:FROM|JOIN)\s+([a-z_]+)\b/g)].map((m) => m[1]!);
      assert.deepEqual(
        tables.filter((t) => t !== 'templates' && t !== 'registries'),
        [],
        `${dialect}/reads.ts`,
      );
    }
    // Findings, syncs and checkpoints are read nowhere in the dialect folders (the catalog reads files).
    assert.deepEqual(
      found(/\b(FROM|JOIN)\s+(findings|syncs|log_checkpoints)\b/i, (name) => name.endsWith('/schema.ts')),
      [],
    );
  });
});
