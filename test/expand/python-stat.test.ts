/**
 * Issue 25 item 14 (docs/expansion.md, "Isolation"): a Python template learns nothing of the
 * machine's files by inspecting paths: `os.stat`, `os.lstat`, `os.access`, `os.path.exists`,
 * `os.path.getsize`, `pathlib.Path.stat` and `posix.stat` of a file that exists and of one that
 * does not both fail as `blocked` (the same rule as opening), and the same sandbox renders right
 * after; the standard library still imports, and a template's own helper modules still work.
 * The rule holds in every thread and signal handler a template starts: deciding keeps no shared
 * state another thread could see (a thread spinning on a library path once opened the guard for
 * the template's own stat), a thread that outlives its template is still held to it, and the
 * handlers a template installs are gone when the next one runs.
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

describe('the Python sandbox: the rule holds in every thread and signal handler of a template', () => {
  // Own sandboxes: these templates run long loops, and a thread they leave behind must not meet
  // the other tests.
  const fresh = () => new RenderSandbox({ timeoutMs: 120_000, memoryMb: 192 });
  const render = async (box: RenderSandbox, source: string): Promise<string> => {
    try {
      return `rendered ${JSON.stringify(await box.renderPython({ name: 'probe.py', source, context, files: {} }))}`;
    } catch (error) {
      assert.ok(error instanceof DmError, String(error));
      return `${error.category}: ${error.message}`;
    }
  };

  it("a thread inspecting Python's library does not let the template's own stat through", async () => {
    const box = fresh();
    try {
      // Before: the guard's flag was process-wide, so while the spinning thread was inside the
      // check of an allowed path, the main thread's stat of the secret went unchecked.
      const answer = await render(
        box,
        `import os, threading, json
def GenerateConfig(c):
    state = {'stop': False, 'spins': 0}
    def spin():
        while not state['stop']:
            os.path.exists(json.__file__)
            state['spins'] += 1
    t = threading.Thread(target=spin)
    t.start()
    got = []
    i = 0
    while not got and (i < 20000 or state['spins'] < 2000):
        i += 1
        try:
            got.append(os.stat(${JSON.stringify(secret)}).st_size)
        except Exception:
            pass
    state['stop'] = True
    t.join()
    return 'size %s after %d' % (got, i)
`,
      );
      // Or no thread at all: the process runs unprivileged under RLIMIT_NPROC 0 (the operating
      // system's boundary, test/expand/python-escape.test.ts).
      assert.match(
        answer,
        /^blocked: probe\.py: blocked: inspecting |^error: probe\.py:\d+: RuntimeError: can't start new thread$/,
        answer,
      );
      assert.doesNotMatch(answer, /1234/);
    } finally {
      box.close();
    }
  });

  it("a signal handler firing while the template inspects Python's library is held to the rule", async () => {
    const box = fresh();
    try {
      const answer = await render(
        box,
        `import os, signal, json
def GenerateConfig(c):
    got = []
    fired = [0]
    def handler(signum, frame):
        fired[0] += 1
        try:
            got.append(os.stat(${JSON.stringify(secret)}).st_size)
        except Exception:
            pass
    signal.signal(signal.SIGPROF, handler)
    signal.setitimer(signal.ITIMER_PROF, 0.0005, 0.0005)
    i = 0
    while not got and (i < 20000 or fired[0] < 200):
        i += 1
        os.path.exists(json.__file__)
    signal.setitimer(signal.ITIMER_PROF, 0)
    return 'size %s after %d' % (got, fired[0])
`,
      );
      assert.match(answer, /^blocked: probe\.py: blocked: inspecting /, answer);
      assert.doesNotMatch(answer, /1234/);
    } finally {
      box.close();
    }
  });

  it('a thread that outlives its template is still held to the rule', async () => {
    const box = fresh();
    try {
      // The thread tries only while no template runs (the runner waits for the next request),
      // and leaves what it learned where the next template looks; each probe returns at once, so
      // the runner waits between probes again.
      const first = await render(
        box,
        `import os, sys, threading, json, time
def GenerateConfig(c):
    runner = sys.modules['__main__']._state
    def later():
        tries = 0
        while tries < 200:
            if runner['active']:
                time.sleep(0.0005)
                continue
            tries += 1
            try:
                json._leak = os.stat(${JSON.stringify(secret)}).st_size
                return
            except Exception:
                time.sleep(0.0005)
        json._leak = 'gave up after %d' % tries
    threading.Thread(target=later, daemon=True).start()
    return 'started'
`,
      );
      // No thread at all where the process runs unprivileged under RLIMIT_NPROC 0 (the operating
      // system's boundary, test/expand/python-escape.test.ts); else the guard holds it.
      if (/RuntimeError: can't start new thread$/.test(first)) return;
      assert.equal(first, 'rendered {"text":"started"}');
      let seen = 'none';
      for (let probe = 0; probe < 100_000 && seen.includes('none'); probe++) {
        seen = await render(
          box,
          `import json
def GenerateConfig(c):
    return str(getattr(json, '_leak', 'none'))
`,
        );
      }
      assert.equal(seen, 'rendered {"text":"gave up after 200"}');
    } finally {
      box.close();
    }
  });

  it('the signal handlers and timers a template sets are gone when the next template runs', async () => {
    const box = fresh();
    try {
      const first = await render(
        box,
        `import signal
def GenerateConfig(c):
    signal.signal(signal.SIGPROF, lambda s, f: None)
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    signal.setitimer(signal.ITIMER_PROF, 3600)
    return 'set'
`,
      );
      assert.equal(first, 'rendered {"text":"set"}');
      const second = await render(
        box,
        `import signal
def GenerateConfig(c):
    return '%s %s %s' % (signal.getsignal(signal.SIGPROF) == signal.SIG_DFL,
                         signal.getsignal(signal.SIGALRM) != signal.SIG_IGN,
                         signal.getitimer(signal.ITIMER_PROF)[0] == 0)
`,
      );
      assert.equal(second, 'rendered {"text":"True True True"}');
    } finally {
      box.close();
    }
  });
});
