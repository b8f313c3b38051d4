/**
 * The escape corpus of test/expand/python-escape*.test.ts (docs/expansion.md, "Isolation"): ways
 * to switch the Python sandbox's in-process guard off, and escapes tried with it off. Each escape
 * returns 'LEAK …' when it got through; files it writes are `<marker>.w|.s|.p`.
 */
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DmError } from '../../client/src/error.js';
import type { RenderSandbox } from '../../client/src/expand/index.js';

/** Ways to switch the in-process guard off; each leaves `g` = the runner's globals. */
export const SWITCH_OFF: Record<string, string> = {
  __main__: "import sys\n    g = sys.modules['__main__'].__dict__",
  'gc.get_objects':
    "import gc\n    g = next(o for o in gc.get_objects() if isinstance(o, dict) and '_state' in o and '_checking' in o)",
  'frame globals': 'import sys\n    g = sys._getframe().f_back.f_globals',
  '__subclasses__ walk':
    "g = next(c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_ImportsFinder').find_spec.__globals__",
};

const q = JSON.stringify;

export interface Targets {
  /** A file only its owner may read (stands for the server's admin token file). */
  token: string;
  home: string;
  /** A TCP port listening on 127.0.0.1. */
  port: number;
  /** A UDP port bound on 127.0.0.1. */
  udpPort?: number;
}

/**
 * A directory anyone may write to, a secret in it, and TCP and UDP listeners counting what
 * reaches them.
 */
export interface Fixture {
  dir: string;
  targets: Targets;
  connections(): number;
  close(): void;
}

export async function escapeFixture(prefix: string): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o777);
  const token = join(dir, 'admin-token');
  writeFileSync(token, 'TOKEN-SECRET-4711', { mode: 0o600 });
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const udp = createSocket('udp4');
  udp.on('message', () => connections++);
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  const udpPort = udp.address().port;
  return {
    dir,
    targets: { token, home: homedir(), port, udpPort },
    connections: () => connections,
    close() {
      server.close();
      udp.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Escapes, each tried with the guard off. */
export function escapes(marker: string, t: Targets): Record<string, string> {
  return {
    'read /etc/shadow': "return 'LEAK ' + open('/etc/shadow').read()[:30]",
    'read the admin token file': `return 'LEAK ' + open(${q(t.token)}).read()`,
    'stat /etc/shadow': "import os\n    return 'LEAK %d' % os.stat('/etc/shadow').st_size",
    'stat the admin token file': `import os\n    return 'LEAK %d' % os.stat(${q(t.token)}).st_size`,
    'list $HOME': `import os\n    return 'LEAK ' + ','.join(os.listdir(${q(t.home)}))`,
    'write a file': `open(${q(`${marker}.w`)}, 'w').write('x')\n    return 'LEAK wrote'`,
    'os.system': `import os\n    r = os.system('echo x > ${marker}.s')\n    return ('LEAK system %d' % r) if r == 0 else 'none'`,
    subprocess: `import subprocess\n    return 'LEAK ' + subprocess.run(['/bin/sh', '-c', 'echo x > ${marker}.p; id'], capture_output=True).stdout.decode()`,
    fork: "import os\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n    os.waitpid(pid, 0)\n    return 'LEAK fork'",
    threads:
      "import threading\n    ev = threading.Event()\n    ts = [threading.Thread(target=ev.wait) for _ in range(8)]\n    started = 0\n    for t in ts:\n        try:\n            t.start()\n            started += 1\n        except Exception:\n            pass\n    ev.set()\n    return ('LEAK threads %d' % started) if started else 'none'",
    'TCP connect to 127.0.0.1': `import socket\n    s = socket.create_connection(('127.0.0.1', ${t.port}), timeout=5)\n    return 'LEAK connected'`,
    'UDP to 127.0.0.1': `import socket\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n    s.sendto(b'x', ('127.0.0.1', ${t.udpPort ?? 9}))\n    return 'LEAK sent'`,
    'ctypes open(2)':
      "import ctypes\n    libc = ctypes.CDLL(None, use_errno=True)\n    fd = libc.open(b'/etc/shadow', 0)\n    return ('LEAK fd %d' % fd) if fd >= 0 else 'none'",
    'ctypes through /proc/1/root':
      "import ctypes\n    libc = ctypes.CDLL(None, use_errno=True)\n    fd = libc.open(b'/proc/1/root/etc/shadow', 0)\n    return ('LEAK fd %d' % fd) if fd >= 0 else 'none'",
    'importlib loader': `import importlib.machinery\n    return 'LEAK ' + importlib.machinery.SourceFileLoader('x', ${q(t.token)}).get_data(${q(t.token)}).decode()`,
  };
}

/** The corpus's escape names (the targets do not change them). */
export const ESCAPE_NAMES = Object.keys(escapes('', { token: '', home: '', port: 0 }));

/** A template that switches the guard off, then tries the escape. */
export function escapeTemplate(switchOff: string, attempt: string): string {
  return `def GenerateConfig(c):\n    ${switchOff}\n    g['_checking'] = lambda: False\n    g['_state']['active'] = False\n    ${attempt}\n`;
}

const context = { properties: {}, env: { name: 'x' }, imports: {} };

/** What rendering the template came to: `rendered <answer>` or `<category>: <message>`. */
export async function outcome(box: RenderSandbox, source: string, ownFile = false): Promise<string> {
  try {
    const r = await box.renderPython({
      name: 'escape.py',
      source,
      context,
      files: {},
      ...(ownFile ? { ownFile } : {}),
    });
    return `rendered ${JSON.stringify(r)}`;
  } catch (error) {
    assert.ok(error instanceof DmError, String(error));
    return `${error.category}: ${error.message}`;
  }
}

/** The escape failed and left nothing behind. */
export function assertContained(answer: string, marker: string): void {
  assert.doesNotMatch(answer, /LEAK|TOKEN-SECRET|root:/, answer);
  for (const suffix of ['.w', '.s', '.p']) {
    assert.ok(!existsSync(marker + suffix), `${marker}${suffix} was written`);
  }
}
