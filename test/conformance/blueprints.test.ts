/**
 * Conformance: every case in ../shared/conformance/blueprints/ (format: conformance/README.md,
 * docs/blueprints.md) through runBlueprintRender with the case as the imports file (the code
 * path of `dm blueprint render`), and a few through the real CLI.
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
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { inputsFromDocument, runBlueprintRender } from '../../client/src/blueprint/index.js';
import { parseYaml } from '../../client/src/document/yaml.js';
import { normaliseInstallations, plain } from '../blueprint/compare.js';

const root = resolve(new URL('../../..', import.meta.url).pathname);
const casesDir = resolve(root, '../shared/conformance/blueprints');
const dmBin = join(root, 'bin/dm.js');

type Obj = Record<string, unknown>;

/** The one change a test may make: execution type GoTemplate → Jinja in every blueprint.yaml. */
function toJinja(files: unknown): unknown {
  if (files === null || typeof files !== 'object' || Array.isArray(files)) return files;
  const out: Obj = {};
  for (const [path, text] of Object.entries(files as Obj)) {
    out[path] =
      typeof text === 'string' && path.replace(/^\/+/, '').endsWith('blueprint.yaml')
        ? text.replace(/type:(\s*)GoTemplate\b/g, 'type:$1Jinja')
        : text;
  }
  return out;
}

interface Case {
  name: string;
  doc: Obj;
  expected: Obj;
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
      const doc = parseYaml(readFileSync(join(casesDir, f), 'utf8'), { source: f }) as Obj;
      const blueprints: Obj = {};
      for (const [ref, entry] of Object.entries((doc.blueprints as Obj | undefined) ?? {})) {
        blueprints[ref] = { ...(entry as Obj), files: toJinja((entry as Obj).files) };
      }
      const imports: Obj = { ...doc, blueprint: toJinja(doc.blueprint), blueprints };
      return { name: f.replace(/\.yaml$/, ''), doc: imports, expected: doc.expected as Obj };
    });
}

const cases = loadCases();

describe('conformance: blueprints', () => {
  it('has the 16 cases docs/blueprints.md names', () => {
    assert.equal(cases.length, 16);
  });

  for (const c of cases) {
    it(`${c.name}`, async () => {
      const { inputs, blueprint } = inputsFromDocument(c.doc, c.name);
      assert.ok(blueprint, 'the case has blueprint files');
      const result = await runBlueprintRender(blueprint, inputs);
      assert.deepEqual(
        normaliseInstallations(plain(result.installations)),
        normaliseInstallations(plain(c.expected.installations)),
        result.error ? `failed in ${result.error.phase}: ${result.error.message}` : undefined,
      );
      const expectedError = c.expected.error as Obj | undefined;
      if (expectedError) {
        assert.ok(result.error, `expected an error in phase ${String(expectedError.phase)}`);
        assert.equal(result.error.phase, expectedError.phase, result.error.message);
      } else {
        assert.equal(result.error, undefined, result.error?.message);
      }
    });
  }
});

describe('conformance: blueprints through `dm blueprint render -o json`', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'dm-bp-conf-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  const runCli = (name: string) => {
    const c = cases.find((x) => x.name === name) as Case;
    const dir = join(tmp, name);
    for (const [path, text] of Object.entries(c.doc.blueprint as Obj)) {
      const file = join(dir, 'blueprint', path.replace(/^\/+/, ''));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, String(text));
    }
    const { blueprint: _files, ...imports } = c.doc;
    writeFileSync(join(dir, 'imports.json'), JSON.stringify(imports));
    const run = spawnSync(
      process.execPath,
      [
        dmBin,
        'blueprint',
        'render',
        join(dir, 'blueprint'),
        '--imports',
        join(dir, 'imports.json'),
        '-o',
        'json',
      ],
      { encoding: 'utf8', env: { ...process.env, XDG_CONFIG_HOME: tmp, XDG_CACHE_HOME: tmp } },
    );
    return { c, run, out: JSON.parse(run.stdout) as Obj };
  };

  it('gt05-subinstallations-export-import renders as the case expects', () => {
    const { c, run, out } = runCli('gt05-subinstallations-export-import');
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(
      normaliseInstallations(out.installations),
      normaliseInstallations(plain(c.expected.installations)),
    );
  });

  it('hm13-subinst-duplicate-export fails with phase subinstallations as the error code', () => {
    const { c, run, out } = runCli('hm13-subinst-duplicate-export');
    assert.notEqual(run.status, 0);
    const error = out.error as Obj;
    assert.equal(error.code, 'subinstallations');
    const details = error.details as Obj;
    assert.equal(details.phase, 'subinstallations');
    assert.deepEqual(
      normaliseInstallations(details.installations),
      normaliseInstallations(plain(c.expected.installations)),
    );
  });
});
