/**
 * A template cut short anywhere (a file saved half-way, a paste that lost its end) fails as a
 * template error a user can act on: one sentence in Jinja's terms with the line, never a message of
 * the JavaScript inside the parser (docs/errors.md). Property-based over every prefix of the sample
 * registry's templates; where dm says the template does not compile, Python's Jinja2 must say so too.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { JinjaRenderError, renderJinja } from '../../client/src/expand/jinja/compat.js';
import { findOracle } from '../support/python-oracle.js';
import { repoRoot } from '../support/run-cli.js';

/** Every `*.jinja` file under registry-fixtures/, as text. */
function fixtureTemplates(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.jinja')) out.push(readFileSync(path, 'utf8'));
    }
  };
  walk(join(repoRoot, 'registry-fixtures'));
  return out;
}

/** What dm says about a template: the compile failure, or undefined when it compiles. */
function compileFailure(src: string): JinjaRenderError | undefined {
  try {
    renderJinja(src, { properties: {}, env: {} }, { name: 't.jinja' });
    return undefined;
  } catch (error) {
    assert.ok(error instanceof JinjaRenderError, `not a template error: ${String(error)}`);
    return error.kind === 'compile' ? error : undefined;
  }
}

/** Words of JavaScript or of nunjucks' parser functions, which mean nothing to a template author. */
const INTERNAL =
  /Cannot read properties|of null|of undefined|is not a function|is not iterable|^parse[A-Z]\w*:/;

describe('templates cut short', () => {
  it('`{{ foo(` at the end: "unexpected end of template" on its line', () => {
    const error = compileFailure('a: 1\nb: {{ foo(');
    assert.ok(error);
    assert.equal(error.message, 'unexpected end of template');
    assert.equal(error.lineno, 2);
  });

  it('every prefix of every sample template fails in words of Jinja, with a line, or renders; Jinja2 agrees it does not compile', () => {
    const templates = fixtureTemplates();
    assert.ok(templates.length > 10, 'the sample registry has templates');
    const refused: string[] = [];
    fc.assert(
      fc.property(
        fc
          .integer({ min: 0, max: templates.length - 1 })
          .chain((t) => fc.tuple(fc.constant(t), fc.integer({ min: 0, max: templates[t]!.length }))),
        ([t, cut]) => {
          const src = templates[t]!.slice(0, cut);
          const error = compileFailure(src);
          if (!error) return;
          refused.push(src);
          assert.doesNotMatch(error.message, INTERNAL, JSON.stringify(src.slice(-40)));
          const lines = src.split('\n').length;
          assert.ok(
            error.lineno !== undefined && error.lineno >= 1 && error.lineno <= lines,
            `line ${error.lineno} of ${lines}: ${error.message}`,
          );
        },
      ),
      { numRuns: 600, seed: 20261129 },
    );
    assert.ok(refused.length > 50, `only ${refused.length} prefixes failed to compile`);
    const python = findOracle();
    assert.ok(python, 'Python 3 with jinja2 (python3-jinja2) is needed');
    const script = `
import json, sys, jinja2
env = jinja2.Environment(extensions=['jinja2.ext.do', 'jinja2.ext.loopcontrols'])
out = []
for src in json.load(sys.stdin):
    try:
        env.parse(src)
        out.append(None)
    except jinja2.TemplateSyntaxError as e:
        out.append(e.message)
json.dump(out, sys.stdout)
`;
    const r = spawnSync(python, ['-c', script], { input: JSON.stringify(refused), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const jinja2 = JSON.parse(r.stdout) as (string | null)[];
    // Jinja2's lexer takes a `{#` (or `{#-`) that ends the text for an empty comment; dm refuses
    // it (a refusal, never a different rendering: docs/expansion.md).
    const compiled = refused.filter((src, i) => jinja2[i] === null && !/\{#-?$/.test(src));
    assert.deepEqual(compiled, [], 'Jinja2 compiles templates dm refuses');
  });
});
