/**
 * The differential fidelity suite (docs/expansion.md, "The fidelity suite"): every template of the corpus
 * (corpus/jinja-cases.yaml, plus the Jinja templates of registry-fixtures/) is rendered by dm and
 * by Python's Jinja2 (jinja2_reference.py), and the two must give the same bytes (and so the same
 * YAML). A difference is either fixed or an explicit rejection (`expect: reject`) with its case.
 *
 * The oracle is `python3` when it imports jinja2 and yaml, else /usr/bin/python3 (Debian's
 * python3-jinja2 and python3-yaml). Without an oracle the suite FAILS, saying so.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseYaml, parseYamlDocuments } from '../../client/src/document/yaml.js';
import { applySchema, parseTemplateSchema } from '../../client/src/expand/index.js';
import { renderJinja } from '../../client/src/expand/jinja/compat.js';
import { findOracle } from '../support/python-oracle.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The repository root, from dist/test/expand or test/expand. */
const repoRoot = [join(here, '../../..'), join(here, '../..')].find((d) =>
  existsSync(join(d, 'test/expand/jinja2_reference.py')),
)!;
const referenceScript = join(repoRoot, 'test/expand/jinja2_reference.py');

interface Case {
  name: string;
  template: string;
  context: Record<string, unknown>;
  files: Record<string, string>;
  expect?: 'error' | 'reject' | 'syntax-error';
}

interface OracleResult {
  ok: boolean;
  text?: string;
  error?: string;
  /** For syntax errors: the message and line, which dm must give alike. */
  message?: string;
  line?: number;
}

function loadCorpus(): Case[] {
  const doc = parseYaml(readFileSync(join(repoRoot, 'test/expand/corpus/jinja-cases.yaml'), 'utf8')) as {
    defaults: { context: Record<string, unknown> };
    cases: Partial<Case>[];
  };
  return doc.cases.map((c) => ({
    name: c.name!,
    template: c.template!,
    context: { ...doc.defaults.context, ...(c.context ?? {}) },
    files: c.files ?? {},
    ...(c.expect ? { expect: c.expect } : {}),
  }));
}

/** The Jinja templates of registry-fixtures, with properties from the example.yaml next to them. */
function loadFixtureTemplates(): Case[] {
  const root = join(repoRoot, 'registry-fixtures');
  if (!existsSync(root)) return [];
  const out: Case[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 6) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory() && !entry.name.startsWith('.')) walk(full, depth + 1);
      else if (entry.isFile() && entry.name.endsWith('.jinja')) {
        const files: Record<string, string> = {};
        const collect = (d: string) => {
          for (const f of readdirSync(d)) {
            const p = join(d, f);
            if (statSync(p).isDirectory()) collect(p);
            else files[relative(dir, p).split('\\').join('/')] = readFileSync(p, 'utf8');
          }
        };
        collect(dir);
        let properties: Record<string, unknown> = {};
        const example = join(dir, 'example.yaml');
        if (existsSync(example)) {
          try {
            const config = parseYaml(readFileSync(example, 'utf8')) as {
              resources?: { type?: string; properties?: Record<string, unknown> }[];
            };
            const resource = (config?.resources ?? []).find(
              (r) => typeof r.type === 'string' && basename(r.type) === entry.name,
            );
            properties = resource?.properties ?? {};
            const schema = files[`${entry.name}.schema`];
            if (schema !== undefined) {
              properties = applySchema(
                parseTemplateSchema({
                  name: `${entry.name}.schema`,
                  path: `${entry.name}.schema`,
                  content: schema,
                }),
                properties,
                entry.name,
              );
            }
          } catch {
            properties = {};
          }
        }
        out.push({
          name: `registry-fixtures/${relative(root, full)}`,
          template: readFileSync(full, 'utf8'),
          context: {
            properties,
            env: {
              deployment: 'fixture',
              name: entry.name.replace(/\.jinja$/, ''),
              type: entry.name,
              project: 'p',
              current_time: 'now',
            },
            imports: files,
          },
          files,
        });
      }
    }
  };
  walk(root, 0);
  return out;
}

function renderWithOracle(python: string, cases: Case[]): OracleResult[] {
  const run = spawnSync(python, [referenceScript], {
    input: JSON.stringify(
      cases.map(({ name, template, context, files }) => ({ name, template, context, files })),
    ),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`the Jinja2 reference script failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as OracleResult[];
}

function renderWithDm(c: Case): OracleResult {
  try {
    return { ok: true, text: renderJinja(c.template, c.context, { name: 'template.jinja', files: c.files }) };
  } catch (error) {
    const line = (error as { lineno?: unknown }).lineno;
    return {
      ok: false,
      error: error instanceof Error ? error.message : String(error),
      ...(typeof line === 'number' ? { line } : {}),
    };
  }
}

function parsedOrError(text: string): unknown {
  try {
    return parseYamlDocuments(text);
  } catch {
    return '<not YAML>';
  }
}

const oracle = findOracle();

describe('Jinja fidelity against Python Jinja2', () => {
  if (!oracle) {
    it('has a Jinja2 oracle', () => {
      assert.fail(
        'no Python with jinja2 and yaml: install them (Debian: apt-get install python3-jinja2 python3-yaml) — the fidelity suite cannot run without its oracle',
      );
    });
    return;
  }
  const cases = [...loadCorpus(), ...loadFixtureTemplates()];
  const expected = renderWithOracle(oracle, cases);

  it('the corpus covers at least 100 templates', () => {
    assert.ok(cases.length >= 100, `only ${cases.length} cases`);
  });

  for (const [i, c] of cases.entries()) {
    it(`renders like Jinja2: ${c.name}`, () => {
      const want = expected[i]!;
      const got = renderWithDm(c);
      if (c.expect === 'error') {
        assert.equal(want.ok, false, `Jinja2 was expected to fail but rendered ${JSON.stringify(want.text)}`);
        assert.equal(
          got.ok,
          false,
          `dm rendered ${JSON.stringify(got.text)} where Jinja2 fails with ${want.error}`,
        );
        return;
      }
      if (c.expect === 'syntax-error') {
        assert.equal(want.ok, false, `Jinja2 was expected to fail but rendered ${JSON.stringify(want.text)}`);
        assert.ok(want.message, `Jinja2 failed, but not with a syntax error: ${want.error}`);
        assert.deepEqual({ message: got.error, line: got.line }, { message: want.message, line: want.line });
        return;
      }
      if (c.expect === 'reject') {
        assert.equal(got.ok, false, `dm must reject this construct, rendered ${JSON.stringify(got.text)}`);
        return;
      }
      assert.equal(want.ok, true, `Jinja2 failed: ${want.error}`);
      assert.equal(
        got.ok,
        true,
        `dm failed where Jinja2 rendered ${JSON.stringify(want.text)}: ${got.error}`,
      );
      assert.deepEqual(parsedOrError(got.text!), parsedOrError(want.text!), 'different YAML');
      assert.equal(got.text, want.text, 'different bytes');
    });
  }
});
