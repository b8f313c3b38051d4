/**
 * Talks to cloud-init's own merging code (test/merge/cloud_init_reference.py) over a pipe, one JSON
 * line per request. cloud-init comes from test/support/cloud-init.sh (Debian's package unpacked
 * into a cache directory, never installed); `findCloudInit` fails with what to run when it is not
 * there. Used by the differential test and by bench/merge.ts.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export interface CloudInit {
  /** The directory to put on PYTHONPATH. */
  pythonPath: string;
  /** A Python that can import cloudinit.mergers, cloudinit.util and the cloud-config handler. */
  python: string;
}

const FETCH_HINT = 'run test/support/cloud-init.sh (it downloads and unpacks the Debian cloud-init package)';

/** Finds the unpacked cloud-init and a Python that can import it; throws an Error saying what to do if not. */
export function findCloudInit(env: NodeJS.ProcessEnv = process.env): CloudInit {
  const cache = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  const pythonPath =
    env.DM_CLOUD_INIT_PYTHONPATH || join(cache, 'dm-ci/cloud-init/usr/lib/python3/dist-packages');
  if (!existsSync(join(pythonPath, 'cloudinit/mergers/__init__.py'))) {
    throw new Error(`cloud-init is not available at ${pythonPath}: ${FETCH_HINT}`);
  }
  const candidates = [env.DM_CLOUD_INIT_PYTHON, 'python3', '/usr/bin/python3'].filter(
    (p): p is string => typeof p === 'string' && p !== '',
  );
  const failures: string[] = [];
  for (const python of [...new Set(candidates)]) {
    const probe = spawnSync(
      python,
      ['-c', 'import cloudinit.mergers, cloudinit.util, cloudinit.handlers.cloud_config, yaml'],
      { env: { ...env, PYTHONPATH: pythonPath }, encoding: 'utf8' },
    );
    if (probe.status === 0) return { pythonPath, python };
    const reason = probe.error ? probe.error.message : (probe.stderr.trim().split('\n').pop() ?? '');
    failures.push(`${python}: ${reason}`);
  }
  throw new Error(
    `no Python can import cloud-init's merging code from ${pythonPath} (${failures.join('; ')}); ` +
      'it needs PyYAML, requests and jsonpatch (Debian: apt-get install python3-yaml python3-requests python3-jsonpatch)',
  );
}

/** Engine values (Maps) to the service's JSON: mappings as {"$map": [[k, v], ...]}. */
export function encodeForPython(value: unknown): unknown {
  if (value instanceof Map) return { $map: [...value].map(([k, v]) => [k, encodeForPython(v)]) };
  if (Array.isArray(value)) return value.map(encodeForPython);
  return value;
}

export function decodeFromPython(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeFromPython);
  if (value !== null && typeof value === 'object') {
    const pairs = (value as { $map: [unknown, unknown][] }).$map;
    return new Map(pairs.map(([k, v]) => [k, decodeFromPython(v)]));
  }
  return value;
}

export class CloudInitReference {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }[] =
    [];
  private stderr = '';

  constructor(cloudInit: CloudInit) {
    const script = resolve(
      new URL('../../..', import.meta.url).pathname,
      'test/merge/cloud_init_reference.py',
    );
    this.child = spawn(cloudInit.python, [script], {
      env: { ...process.env, PYTHONPATH: cloudInit.pythonPath, PYTHONHASHSEED: '0' },
    });
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-4000);
    });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.waiting.shift()?.resolve(JSON.parse(line) as Record<string, unknown>);
    });
    this.child.on('exit', (code) => {
      for (const w of this.waiting.splice(0)) {
        w.reject(new Error(`cloud_init_reference.py exited with ${code}: ${this.stderr}`));
      }
    });
  }

  request(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    return new Promise((resolvePromise, reject) => {
      this.waiting.push({ resolve: resolvePromise, reject });
      this.child.stdin.write(`${JSON.stringify(body)}\n`);
    });
  }

  close(): void {
    this.child.stdin.end();
  }
}
