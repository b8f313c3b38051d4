/**
 * Issue 25 item 14, the whole of it (docs/expansion.md, "Isolation"): the Python sandbox's audit
 * guard lives in the template's own process, so a template can switch it off. Each template
 * here first switches it off one way (through `__main__`, `gc.get_objects`, a frame's globals, a
 * `__subclasses__` walk), then tries one escape (read or stat a file outside its own, list $HOME,
 * write, `os.system`, `subprocess`, `fork`, threads, a TCP connect to 127.0.0.1, `ctypes`, an
 * importlib loader; test/expand/python-escape-corpus.ts). Each runs through the real sandbox and
 * must fail without leaking: the answer says nothing it found, no file appears, no connection
 * arrives. What holds is the operating system's boundary the process enters before any template
 * runs (new user, mount and network namespaces, a root holding only Python's library, an
 * unprivileged uid, Landlock). Before it, every escape here got through.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DmError } from '../../client/src/error.js';
import { RenderSandbox } from '../../client/src/expand/index.js';
import {
  assertContained,
  ESCAPE_NAMES,
  escapeFixture,
  escapes,
  escapeTemplate,
  type Fixture,
  outcome,
  SWITCH_OFF,
} from './python-escape-corpus.js';

let fixture: Fixture;

before(async () => {
  fixture = await escapeFixture('dm-escape-');
});
after(() => fixture.close());

/** Whether this machine lets an unprivileged process create a user namespace. */
function namespacesAllowed(): boolean {
  const r = spawnSync('unshare', ['--user', '--net', '--mount', 'true'], {
    ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}),
  });
  return r.status === 0;
}

describe('the Python sandbox holds with its in-process guard switched off', () => {
  it('the process enters namespaces and Landlock, as an unprivileged uid; the guard can be switched off', async () => {
    const box = new RenderSandbox({ timeoutMs: 60_000, memoryMb: 256 });
    try {
      const boundary = await box.pythonBoundary();
      if (namespacesAllowed()) assert.ok(boundary.layers.includes('namespaces'), JSON.stringify(boundary));
      assert.ok(boundary.layers.includes('landlock'), JSON.stringify(boundary));
      assert.ok(boundary.layers.includes('seccomp'), JSON.stringify(boundary));
      const uid = await outcome(box, 'import os\ndef GenerateConfig(c):\n    return str(os.getuid())\n');
      assert.equal(uid, `rendered {"text":"${process.getuid?.() === 0 ? 65534 : process.getuid?.()}"}`);
      // The guard refuses reading a file; a template switches it off through __main__.
      const guarded = await outcome(box, "def GenerateConfig(c):\n    return open('/etc/hostname').read()\n");
      assert.match(guarded, /^blocked: /, guarded);
      const off = await outcome(box, escapeTemplate(SWITCH_OFF.__main__!, "import json\n    return 'off'"));
      assert.equal(off, 'rendered {"text":"off"}');
      // Python's library, PyYAML (with its C loader) and a template's helper modules still work.
      const works = await outcome(
        box,
        'import yaml, decimal, hashlib, json\ndef GenerateConfig(c):\n    return yaml.dump(yaml.safe_load("a: [1, 2]")) + hashlib.sha256(b"").hexdigest()[:4] + str(decimal.Decimal(1))\n',
      );
      assert.equal(works, 'rendered {"text":"a: [1, 2]\\ne3b01"}');
    } finally {
      box.close();
    }
  });

  it('as root, an interpreter nobody may not run is refused with a hint saying why', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('dm does not run as root here');
    const closed = join(fixture.dir, 'closed');
    mkdirSync(closed, { mode: 0o700 });
    symlinkSync('/usr/bin/python3', join(closed, 'python3'));
    const box = new RenderSandbox({ python: join(closed, 'python3') });
    try {
      const error = await box
        .renderPython({
          name: 'a.py',
          source: 'def GenerateConfig(c):\n    return "x"\n',
          context: {},
          files: {},
          ownFile: true,
        })
        .then(
          () => assert.fail('rendered'),
          (e: unknown) => e,
        );
      assert.ok(error instanceof DmError);
      assert.equal(error.code, 'PYTHON_NOT_FOUND');
      assert.match(error.message, /EACCES/);
      assert.match(error.hint ?? '', /as nobody when it runs as root/);
    } finally {
      box.close();
    }
  });

  for (const [how, switchOff] of Object.entries(SWITCH_OFF)) {
    for (const name of ESCAPE_NAMES) {
      it(`guard off via ${how}, then ${name}: fails without leaking`, async () => {
        const marker = join(fixture.dir, `${how}-${name}`.replace(/[^a-z0-9]+/gi, '_'));
        const box = new RenderSandbox({ timeoutMs: 60_000, memoryMb: 256 });
        const before = fixture.connections();
        try {
          const answer = await outcome(
            box,
            escapeTemplate(switchOff, escapes(marker, fixture.targets)[name]!),
          );
          assertContained(answer, marker);
          assert.equal(fixture.connections(), before, 'a connection reached 127.0.0.1');
          // The sandbox carries on.
          assert.equal(
            await outcome(box, 'def GenerateConfig(c):\n    return "ok"\n'),
            'rendered {"text":"ok"}',
          );
        } finally {
          box.close();
        }
      });
    }
  }
});
