/**
 * Conformance: every case in ../shared/conformance/cloud-init/ (format: conformance/README.md;
 * docs/merging.md, "How dm is checked against cloud-init") through `mergeLoadedDocuments`, the
 * function behind `dm merge`; the merge-sources cases' original files also through the real CLI.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { DmError } from '../../client/src/error.js';
import {
  type LoadedDocument,
  type MergeMap,
  mergeLoadedDocuments,
  parseMergeDocuments,
  toPlainValue,
} from '../../client/src/merge/index.js';
import { findDifference } from '../merge/compare.js';

const root = resolve(new URL('../../..', import.meta.url).pathname);
const casesDir = resolve(root, '../shared/conformance/cloud-init');
const dmBin = join(root, 'bin/dm.js');

interface Case {
  file: string;
  name: string;
  mode: string;
  sources: unknown[];
  headers?: unknown[];
  mergeHow?: string;
  reverse: boolean;
  expected?: unknown;
  skipped?: { index: number; error: string }[];
  expectedError?: string;
  rawSources?: string[];
}

function loadCases(): Case[] {
  if (!existsSync(casesDir)) {
    throw new Error(
      `conformance cases not found at ${casesDir}: the shared/ tree must sit beside the repository`,
    );
  }
  return readdirSync(casesDir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => {
      const file = join(casesDir, f);
      const [doc] = parseMergeDocuments(readFileSync(file, 'utf8'), file) as [MergeMap];
      const get = (k: string) => doc.get(k);
      const skipped = get('skipped') as MergeMap[] | undefined;
      return {
        file,
        name: f.replace(/\.yaml$/, ''),
        mode: get('mode') as string,
        sources: get('sources') as unknown[],
        headers: get('headers') as unknown[] | undefined,
        mergeHow: get('merge_how') as string | undefined,
        reverse: get('reverse') === true,
        expected: get('expected'),
        skipped: skipped?.map((s) => ({ index: s.get('index') as number, error: s.get('error') as string })),
        expectedError: get('expected_error') as string | undefined,
        rawSources: get('raw_sources') as string[] | undefined,
      };
    });
}

const kindOf = (error: string) => error.slice(0, error.indexOf(':') === -1 ? undefined : error.indexOf(':'));

function headersOf(value: unknown): Record<string, string> | undefined {
  if (!(value instanceof Map)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of value) out[String(k)] = String(v);
  return out;
}

/** The case's sources as `dm merge` would load them from files, one document per file. */
function documentsOf(c: Case): LoadedDocument[] {
  return c.sources.map((document, i) => {
    const file = `${c.name}-source${i}.yaml`;
    const headers = headersOf(c.headers?.[i]);
    return { document, file, position: 1, source: file, ...(headers ? { headers } : {}) };
  });
}

function run(c: Case): { result?: unknown; skipped?: { index: number; code: string }[]; error?: string } {
  try {
    if (c.mode === 'userdata') {
      const out = mergeLoadedDocuments(documentsOf(c), { as: 'user-data' });
      return { result: out.result, skipped: out.skipped };
    }
    if (c.mode === 'mergemanydict') {
      // `--as values` is mergemanydict(reverse=True); a case without reverse gets its sources reversed.
      const docs = documentsOf(c);
      const out = mergeLoadedDocuments(c.reverse ? docs : docs.reverse(), { as: 'values' });
      return { result: out.result };
    }
    if (c.mode === 'merger') {
      const out = mergeLoadedDocuments(documentsOf(c), { as: 'raw', mergeHow: c.mergeHow ?? '' });
      return { result: out.result };
    }
    throw new Error(`unknown mode ${c.mode}`);
  } catch (error) {
    if (error instanceof DmError) return { error: error.code };
    throw error;
  }
}

const cases = loadCases();

describe('cloud-init conformance cases', () => {
  it('finds all 62 cases', () => {
    assert.equal(cases.length, 62);
  });

  for (const c of cases) {
    it(`${c.name} (${c.mode})`, () => {
      const out = run(c);
      if (c.expectedError !== undefined) {
        assert.equal(
          out.error,
          kindOf(c.expectedError),
          `expected error ${c.expectedError}, got ${JSON.stringify(out)}`,
        );
        return;
      }
      assert.equal(out.error, undefined, `unexpected error ${out.error}`);
      const diff = findDifference(out.result, c.expected, c.name === 'ud-key-order');
      assert.equal(diff, undefined, diff);
      if (c.mode === 'userdata') {
        const expectedSkips = (c.skipped ?? []).map((s) => ({ index: s.index, code: kindOf(s.error) }));
        assert.deepEqual(
          out.skipped?.map((s) => ({ index: s.index, code: s.code })),
          expectedSkips,
        );
      }
    });
  }
});

describe('cloud-init conformance: merge-sources files through `dm merge`', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dm-merge-conformance-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const withRaw = cases.filter((c) => c.rawSources !== undefined);

  it('has the 12 merge-sources cases', () => {
    assert.equal(withRaw.length, 12);
  });

  for (const c of withRaw) {
    it(`dm merge ${c.name} -o json`, () => {
      const files = c.rawSources!.map((text, i) => {
        const file = join(dir, `${c.name}-${i + 1}.yaml`);
        writeFileSync(file, text);
        return file;
      });
      const proc = spawnSync(process.execPath, [dmBin, 'merge', ...files, '-o', 'json'], {
        encoding: 'utf8',
      });
      assert.equal(proc.status, 0, proc.stderr);
      const out = JSON.parse(proc.stdout) as { result: unknown; skipped: { index: number; code: string }[] };
      const diff = findDifference(out.result, toPlainValue(c.expected));
      assert.equal(diff, undefined, diff);
      assert.deepEqual(
        out.skipped.map((s) => ({ index: s.index, code: s.code })),
        (c.skipped ?? []).map((s) => ({ index: s.index, code: kindOf(s.error) })),
      );
    });
  }
});
