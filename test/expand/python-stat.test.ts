/**
 * Issue 25 item 14 (docs/expansion.md, "Isolation"): a Python template learns nothing of the
 * machine's files by inspecting paths: `os.stat`, `os.lstat`, `os.access`, `os.path.exists`,
 * `os.path.getsize`, `pathlib.Path.stat` and `posix.stat` of a file that exists and of one that
 * does not both fail as `blocked` (the same rule as opening), and the same sandbox renders right
 * after; the standard library still imports, and a template's own helper modules still work.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DmError } from '../../client/src/error.js';
import { RenderSandbox } from '../../client/src/expand/index.js';

let sandbox: RenderSandbox;
const dir = mkdtempSync(join(tmpdir(), 'dm-stat-'));
/** A file that exists, with a size a template must not learn. */
const secret = join(dir, 'admin-token');
writeFileSync(secret, 'x'.repeat(1234));
const missing = join(dir, 'no-such-file');

before(() => {
  sandbox = new RenderSandbox({ timeoutMs: 5000, memoryMb: 192 });
});
after(() => {
  sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

const context = { properties: {}, env: { name: 'x' }, imports: {} };

const PROBES: [string, (path: string) => string][] = [
  [
    'os.stat',
    (p) => `import os\ndef GenerateConfig(c):\n    return str(os.stat(${JSON.stringify(p)}).st_size)\n`,
  ],
  ['os.lstat', (p) => `import os\ndef GenerateConfig(c):\n    return str(os.lstat(${JSON.stringify(p)}))\n`],
  [
    'os.access',
    (p) => `import os\ndef GenerateConfig(c):\n    return str(os.access(${JSON.stringify(p)}, os.F_OK))\n`,
  ],
  [
    'os.path.exists',
    (p) => `import os.path\ndef GenerateConfig(c):\n    return str(os.path.exists(${JSON.stringify(p)}))\n`,
  ],
  [
    'os.path.getsize',
    (p) => `import os.path\ndef GenerateConfig(c):\n    return str(os.path.getsize(${JSON.stringify(p)}))\n`,
  ],
  [
    'pathlib',
    (p) =>
      `import pathlib\ndef GenerateConfig(c):\n    return str(pathlib.Path(${JSON.stringify(p)}).stat())\n`,
  ],
  [
    'posix.stat',
    (p) => `import posix\ndef GenerateConfig(c):\n    return str(posix.stat(${JSON.stringify(p)}))\n`,
  ],
  [
    'a caught refusal',
    (p) =>
      `import os\ndef GenerateConfig(c):\n    try:\n        os.stat(${JSON.stringify(p)})\n        return "exists"\n    except Exception:\n        return "absent"\n`,
  ],
];

async function outcome(source: string): Promise<string> {
  try {
    const r = await sandbox.renderPython({ name: 'probe.py', source, context, files: {} });
    return `rendered ${JSON.stringify(r)}`;
  } catch (error) {
    assert.ok(error instanceof DmError, String(error));
    return `${error.category}: ${error.message.replace(secret, 'PATH').replace(missing, 'PATH')}`;
  }
}

describe('the Python sandbox: inspecting a path follows the rule of reading one', () => {
  for (const [name, probe] of PROBES) {
    it(`${name}: the same refusal for a file that exists and one that does not`, async () => {
      const present = await outcome(probe(secret));
      const absent = await outcome(probe(missing));
      assert.match(present, /^blocked: /, present);
      assert.equal(present, absent);
      assert.doesNotMatch(present, /1234/);
      assert.deepEqual(
        await sandbox.renderPython({
          name: 'ok.py',
          source: 'def GenerateConfig(c):\n    return "ok"\n',
          context,
          files: {},
        }),
        { text: 'ok' },
      );
    });
  }

  it('the standard library and a template helper module still import and run', async () => {
    const r = await sandbox.renderPython({
      name: 'main.py',
      source:
        'import textwrap, json, decimal, helpers.names\ndef GenerateConfig(c):\n    return textwrap.dedent("  " + helpers.names.NAME) + json.dumps(str(decimal.Decimal(1)))\n',
      context,
      files: { 'helpers/names.py': 'NAME = "web"\n', 'helpers/__init__.py': '' },
    });
    assert.deepEqual(r, { text: 'web"1"' });
  });
});
