/**
 * The Python sandbox where namespaces are refused (docs/expansion.md, "Isolation"): the
 * interpreter runs behind a wrapper that sets `user.max_user_namespaces` to 0 around it, as a
 * container that forbids user namespaces would. Then a registry's Python template is refused
 * (`PYTHON_ISOLATION_UNAVAILABLE`, naming why and the opt-in) unless the operator opts in with
 * `best-effort`; the user's own templates run. Either way the process has entered Landlock as an
 * unprivileged uid, and the escapes of the corpus (test/expand/python-escape-corpus.ts) fail,
 * except what Landlock cannot hide: whether a path exists and its size (the in-process guard's
 * refusal is all there is, and a template can switch it off).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DmError } from '../../client/src/error.js';
import { RenderSandbox } from '../../client/src/expand/index.js';
import { pythonIsolationFromEnv } from '../../client/src/expand/python/boundary.js';
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
/** python3 where creating a user namespace fails (ENOSPC), as in a container that forbids it. */
let python = '';

before(async () => {
  fixture = await escapeFixture('dm-escape-fallback-');
  python = join(fixture.dir, 'python-no-userns');
  writeFileSync(
    python,
    `#!/bin/sh\nexec unshare --user --map-root-user sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec /usr/bin/python3 "$@"' python3 "$@"\n`,
    { mode: 0o755 },
  );
});
after(() => fixture.close());

const ok = 'def GenerateConfig(c):\n    return "ok"\n';

describe('the Python sandbox where namespaces are refused', () => {
  it("refuses a registry's template, names why and the opt-in; runs the user's own", async () => {
    const box = new RenderSandbox({
      timeoutMs: 60_000,
      memoryMb: 256,
      python,
      pythonIsolation: 'namespaces',
    });
    try {
      const boundary = await box.pythonBoundary();
      assert.deepEqual(boundary.layers, ['landlock', 'seccomp']);
      assert.match(boundary.refused ?? '', /namespaces refused \(No space left on device\)/);
      const refused = await box.renderPython({ name: 'web.py', source: ok, context: {}, files: {} }).then(
        () => assert.fail('rendered'),
        (e: unknown) => e,
      );
      assert.ok(refused instanceof DmError);
      assert.equal(refused.code, 'PYTHON_ISOLATION_UNAVAILABLE');
      assert.equal(refused.category, 'blocked');
      assert.match(
        refused.message,
        /^web\.py: blocked: a Python template from a registry runs only inside namespaces/,
      );
      assert.match(refused.hint ?? '', /DM_PYTHON_ISOLATION=best-effort/);
      assert.equal(await outcome(box, ok, true), 'rendered {"text":"ok"}');
    } finally {
      box.close();
    }
  });

  it("runs a registry's template with the operator's opt-in (best-effort)", async () => {
    const box = new RenderSandbox({
      timeoutMs: 60_000,
      memoryMb: 256,
      python,
      pythonIsolation: 'best-effort',
    });
    try {
      assert.equal(await outcome(box, ok), 'rendered {"text":"ok"}');
      assert.deepEqual((await box.pythonBoundary()).layers, ['landlock', 'seccomp']);
    } finally {
      box.close();
    }
  });

  it('DM_PYTHON_ISOLATION: the default, the opt-in, and a typo refused', () => {
    assert.equal(pythonIsolationFromEnv({}), 'namespaces');
    assert.equal(pythonIsolationFromEnv({ DM_PYTHON_ISOLATION: 'best-effort' }), 'best-effort');
    assert.throws(
      () => pythonIsolationFromEnv({ DM_PYTHON_ISOLATION: 'besteffort' }),
      (e: unknown) => e instanceof DmError && /DM_PYTHON_ISOLATION is 'besteffort'/.test(e.message),
    );
  });

  // Landlock cannot hide whether a path exists, nor its size: with the guard switched off, stat
  // answers (docs/expansion.md, "Isolation"); everything else still fails.
  const hidden = (name: string) => !name.startsWith('stat ');
  const how = '__subclasses__ walk';
  for (const name of ESCAPE_NAMES.filter(hidden)) {
    it(`Landlock only, guard off via ${how}, then ${name}: fails without leaking`, async () => {
      const marker = join(fixture.dir, name.replace(/[^a-z0-9]+/gi, '_'));
      const box = new RenderSandbox({
        timeoutMs: 60_000,
        memoryMb: 256,
        python,
        pythonIsolation: 'best-effort',
      });
      const before = fixture.connections();
      try {
        const answer = await outcome(
          box,
          escapeTemplate(SWITCH_OFF[how]!, escapes(marker, fixture.targets)[name]!),
        );
        assertContained(answer, marker);
        assert.equal(fixture.connections(), before, 'a connection reached 127.0.0.1');
      } finally {
        box.close();
      }
    });
  }
});
