/**
 * Conformance with Deckhand (docs/layering.md): every case in ../shared/conformance/deckhand/
 * (format: ../shared/conformance/README.md) goes through the code path of `dm render` (YAML text →
 * parse → renderDocuments), in the given order, reversed and in seeded shuffles; a handful also go
 * through the real `dm` binary.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { formatYamlDocuments, parseYaml, parseYamlDocuments } from '../../client/src/document/yaml.js';
import { isDmError } from '../../client/src/error.js';
import { deepEqual, isMapping, type Mapping } from '../../client/src/layer/data.js';
import type { RenderedDocument } from '../../client/src/layer/index.js';
import { prevalidateDocuments } from '../../client/src/layer/prevalidate.js';
import { renderTexts } from '../../client/src/layer/render-files.js';

function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'client'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('deckhand conformance: cannot find the repository root');
    dir = up;
  }
  return dir;
}

const ROOT = findRepoRoot();
const CASES_DIR = join(ROOT, '..', 'shared', 'conformance', 'deckhand');

interface DeckhandCase {
  name: string;
  deckhand_schema_valid?: boolean;
  tags?: string[];
  options?: { validate?: boolean; fail_on_missing_sub_src?: boolean };
  documents: unknown[];
  expected?: Mapping[];
  error?: string;
}

function loadCases(): DeckhandCase[] {
  if (!existsSync(CASES_DIR)) {
    throw new Error(`deckhand conformance cases are missing: ${CASES_DIR} does not exist`);
  }
  const files = readdirSync(CASES_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
  return files.map((f) => {
    const parsed = parseYaml(readFileSync(join(CASES_DIR, f), 'utf8'), { source: f }) as DeckhandCase;
    return { ...parsed, name: f.replace(/\.yaml$/, '') };
  });
}

/**
 * Cases tagged `quirk` or `python-ism` that dm deliberately answers differently, with the reason
 * (docs/layering.md, "Deliberate differences") and dm's own answer. Empty: dm currently reproduces
 * every case, including the python-ism one (it emulates Python's str()).
 */
const KNOWN_DIFFERENCES: Record<string, { reason: string; dm: { error: string } | { expected: Mapping[] } }> =
  {};

type Outcome = { ok: true; docs: Map<string, unknown> } | { ok: false; code: string; message: string };

function key(schema: unknown, name: unknown, layer: unknown): string {
  return JSON.stringify([schema ?? '', name ?? '', layer ?? '']);
}

function project(documents: readonly Mapping[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const doc of documents) {
    const meta = isMapping(doc.metadata) ? doc.metadata : {};
    if (typeof meta.schema === 'string' && meta.schema.startsWith('metadata/Control')) continue;
    const ld = isMapping(meta.layeringDefinition) ? meta.layeringDefinition : {};
    const k = key(doc.schema, meta.name, ld.layer);
    assert.ok(!out.has(k), `two rendered documents share the key ${k}`);
    out.set(k, doc.data ?? null);
  }
  return out;
}

/** Renders through the CLI's path: the documents as one YAML stream, parsed and rendered. */
function run(c: DeckhandCase, documents: readonly unknown[]): Outcome {
  try {
    const rendered: RenderedDocument[] = renderTexts(
      [{ source: `${c.name}.yaml`, text: formatYamlDocuments(documents) }],
      {
        validate: c.options?.validate === true,
        lenientSubstitution: c.options?.fail_on_missing_sub_src === false,
      },
    );
    return { ok: true, docs: project(rendered) };
  } catch (error) {
    if (!isDmError(error)) throw error;
    return { ok: false, code: error.code, message: error.message };
  }
}

function check(outcome: Outcome, want: { error: string } | { expected: Mapping[] }, label: string): void {
  if ('error' in want) {
    assert.equal(outcome.ok, false, `${label}: expected error ${want.error}, but rendering succeeded`);
    assert.equal(
      (outcome as { code: string }).code,
      want.error,
      `${label}: ${(outcome as { message: string }).message}`,
    );
    return;
  }
  if (!outcome.ok) assert.fail(`${label}: expected documents, got ${outcome.code}: ${outcome.message}`);
  const expected = project(want.expected);
  assert.deepEqual(
    [...outcome.docs.keys()].sort(),
    [...expected.keys()].sort(),
    `${label}: rendered document set`,
  );
  for (const [k, data] of expected) {
    const got = outcome.docs.get(k);
    assert.ok(
      deepEqual(got, data),
      `${label}: data of ${k}\n  got:      ${JSON.stringify(got)}\n  expected: ${JSON.stringify(data)}`,
    );
  }
}

/** mulberry32: a small seeded generator, so a failing shuffle can be replayed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const random = seeded(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const SEEDS = [1, 42, 20240501];

function orders(documents: readonly unknown[]): [string, unknown[]][] {
  return [
    ['given order', [...documents]],
    ['reversed', [...documents].reverse()],
    ...SEEDS.map((s): [string, unknown[]] => [`shuffle seed ${s}`, shuffled(documents, s)]),
  ];
}

function expectation(c: DeckhandCase): { error: string } | { expected: Mapping[] } {
  if (typeof c.error === 'string') return { error: c.error };
  assert.ok(Array.isArray(c.expected), `${c.name}: case has neither expected nor error`);
  return { expected: c.expected };
}

const cases = loadCases();

describe('deckhand conformance', () => {
  it('finds all 176 cases in ../shared/conformance/deckhand', () => {
    assert.equal(cases.length, 176);
  });

  it('lists known differences only for quirk or python-ism cases that exist', () => {
    for (const name of Object.keys(KNOWN_DIFFERENCES)) {
      const c = cases.find((x) => x.name === name);
      assert.ok(c, `known difference ${name} names no case`);
      assert.ok(
        c.tags?.some((t) => t === 'quirk' || t === 'python-ism'),
        `${name} is not tagged quirk or python-ism, so dm must match it`,
      );
    }
  });

  // `deckhand_schema_valid` is informational, but it is Deckhand's own verdict: dm's pre-validation
  // must agree, except where dm's pre-validation states a rule the recorded verdict does not show
  // (docs/layering.md, "Pre-validation").
  const VALIDATION_DIFFERENCES = new Set([
    'layering-negative__test_layering_documents_with_different_schemas_raises_exc__1',
    'layering-negative__test_layering_documents_with_different_schemas_raises_exc__2',
  ]);
  it('pre-validation accepts exactly the cases Deckhand accepts (deckhand_schema_valid)', () => {
    const disagreements: string[] = [];
    for (const c of cases) {
      let accepted = true;
      let message = '';
      try {
        prevalidateDocuments(c.documents);
      } catch (error) {
        assert.ok(isDmError(error));
        assert.equal(error.code, 'InvalidDocumentFormat');
        accepted = false;
        message = error.message;
      }
      if (accepted !== c.deckhand_schema_valid) disagreements.push(`${c.name}: dm ${accepted} ${message}`);
    }
    assert.deepEqual(
      disagreements.map((d) => d.split(':')[0]),
      [...VALIDATION_DIFFERENCES],
      disagreements.join('\n'),
    );
  });

  for (const c of cases) {
    const known = KNOWN_DIFFERENCES[c.name];
    it(`renderDocuments() matches Deckhand on ${c.name}${known ? ' (known difference)' : ''}`, () => {
      for (const [label, documents] of orders(c.documents)) {
        const outcome = run(c, documents);
        if (known) {
          check(outcome, known.dm, `${c.name} (${label}, dm's documented answer)`);
          assert.throws(
            () => check(outcome, expectation(c), label),
            `${c.name}: no longer differs from Deckhand`,
          );
        } else {
          check(outcome, expectation(c), `${c.name} (${label})`);
        }
      }
    });
  }
});

describe('dm render (the binary) on conformance cases', () => {
  const work = mkdtempSync(join(tmpdir(), 'dm-render-conformance-'));
  after(() => rmSync(work, { recursive: true, force: true }));
  const bin = join(ROOT, 'bin', 'dm.js');

  function dm(args: string[]): { status: number | null; stdout: string; stderr: string } {
    const result = spawnSync(process.execPath, [bin, ...args], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, XDG_CONFIG_HOME: join(work, 'config'), NO_COLOR: '1' },
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  function byName(name: string): DeckhandCase {
    const c = cases.find((x) => x.name === name);
    assert.ok(c, `no case ${name}`);
    return c;
  }

  function flags(c: DeckhandCase): string[] {
    return [
      ...(c.options?.validate ? ['--validate'] : []),
      ...(c.options?.fail_on_missing_sub_src === false ? ['--lenient-substitution'] : []),
    ];
  }

  const names = [
    'layering__test_layering_using_grandparent_as_parent',
    'functional__layering_with_substitution__dag',
    'replacement__test_replacement_with_substitution_from_replacer',
    'layering__test_layering_with_missing_substitution_source_log_warning',
    'functional__layering_policy_missing',
    'layering-negative__test_layering_invalid_substitution_format_raises_exc__1',
    'layering-substitution-negative__test_layering_with_substitution_cycle_fails',
  ].filter((n) => cases.some((c) => c.name === n));

  it('covers several success and error cases', () => {
    assert.ok(names.length >= 6, `only ${names.length} of the chosen cases exist`);
  });

  for (const name of names) {
    it(`dm render -o json matches Deckhand on ${name}`, () => {
      const c = byName(name);
      const file = join(work, `${name}.yaml`);
      writeFileSync(file, formatYamlDocuments(c.documents));
      const result = dm(['render', file, ...flags(c), '-o', 'json']);
      let out: unknown;
      try {
        out = JSON.parse(result.stdout);
      } catch {
        assert.fail(`dm render printed no JSON (exit ${result.status}): ${result.stdout}\n${result.stderr}`);
      }
      if (typeof c.error === 'string') {
        assert.equal(result.status, c.error === 'InvalidDocumentFormat' ? 4 : 1, result.stderr);
        assert.equal((out as { error: { code: string } }).error.code, c.error);
        assert.match(result.stderr, /^error: /);
        check({ ok: false, code: c.error, message: '' }, expectation(c), name);
      } else {
        assert.equal(result.status, 0, result.stderr);
        assert.ok(Array.isArray(out));
        check({ ok: true, docs: project(out as Mapping[]) }, expectation(c), name);
      }
    });
  }

  it('dm render reads a directory of *.yaml and *.yml files in sorted order and prints a YAML stream', () => {
    const c = byName('functional__layering_with_substitution__dag');
    const dir = join(work, 'tree');
    mkdirSync(join(dir, 'nested'), { recursive: true });
    const half = Math.ceil(c.documents.length / 2);
    writeFileSync(join(dir, 'b.yaml'), formatYamlDocuments(c.documents.slice(0, half)));
    writeFileSync(join(dir, 'nested', 'a.yml'), formatYamlDocuments(c.documents.slice(half)));
    writeFileSync(join(dir, 'ignored.txt'), 'not: yaml: [');
    const result = dm(['render', dir]);
    assert.equal(result.status, 0, result.stderr);
    const docs = parseYamlDocuments(result.stdout).filter((d) => d !== null) as Mapping[];
    check({ ok: true, docs: project(docs) }, expectation(c), 'directory input');
  });

  it('dm render reports bad YAML with file:line and exit 1', () => {
    const file = join(work, 'bad.yaml');
    writeFileSync(file, 'schema: a/B/v1\nmetadata: {name: x\n');
    const result = dm(['render', file, '-o', 'json']);
    assert.equal(result.status, 1);
    const out = JSON.parse(result.stdout) as { error: { code: string; message: string } };
    assert.equal(out.error.code, 'INVALID_YAML');
    assert.match(out.error.message, /bad\.yaml:\d+/);
  });

  it('dm render exits 3 for a missing file', () => {
    const result = dm(['render', join(work, 'nope.yaml'), '-o', 'json']);
    assert.equal(result.status, 3);
    assert.equal((JSON.parse(result.stdout) as { error: { code: string } }).error.code, 'FILE_NOT_FOUND');
  });
});
