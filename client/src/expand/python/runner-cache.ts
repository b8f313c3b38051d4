/**
 * The Python runner compiled ahead (docs/expansion.md, "Speed"): compiling the runner's ~780
 * lines given with `-c` is 7–10 ms of the Python process's CPU at every start. Its code object,
 * marshalled, is kept in dm's cache directory (the user's own, as Node's compile cache and the
 * Jinja renderer's snapshot: docs/client.md, "The CLI bundle"), one file per runner and
 * interpreter; the process is then started with a short bootstrap that reads the code from its
 * stdin, ahead of the requests, and runs it. The bootstrap holds the runner's source too and
 * compiles it when the code was made by another Python (its `sys.version` is in the file) or does
 * not load, so a stale or damaged file costs the time it would save, never a wrong runner. The
 * file is made in the background by the interpreter itself, at the lowest priority, when a run
 * misses one that an earlier run missed too, and taken only whole (its size is in its name).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PYTHON_RUNNER_SOURCE } from './runner-source.js';

/** Defined only in the CLI bundle (scripts/bundle.mjs): the digest of PYTHON_RUNNER_SOURCE. */
declare const DM_PYTHON_RUNNER_DIGEST: string | undefined;

/** Where the compiled runners are kept, in dm's cache directory (dmDirectories(env).cache). */
export function pythonRunnerDir(dmCacheDir: string): string {
  return join(dmCacheDir, 'python-runners');
}

let computed: string | undefined;
/** The runner's digest: the bundle's, else computed (the server and tests run the modules). */
function runnerDigest(): string {
  if (typeof DM_PYTHON_RUNNER_DIGEST === 'string') return DM_PYTHON_RUNNER_DIGEST;
  computed ??= (process.getBuiltinModule('node:crypto') as typeof import('node:crypto'))
    .createHash('sha256')
    .update(PYTHON_RUNNER_SOURCE)
    .digest('hex')
    .slice(0, 32);
  return computed;
}

/** FNV-1a, 32 bits: names an interpreter in a file name (a clash costs a compilation, no more). */
function fnv(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

/**
 * The interpreter file `python` names where the sandbox's PATH (`/usr/bin:/bin`) or its working
 * directory (`/`) finds it, with its size and time: a new interpreter gets a new file.
 */
function interpreterStamp(python: string): string | undefined {
  const candidates = python.includes('/')
    ? [resolve('/', python)]
    : ['/usr/bin', '/bin'].map((d) => join(d, python));
  for (const path of candidates) {
    try {
      const s = statSync(path);
      if (s.isFile()) return `${python}\0${path}\0${s.size}\0${s.mtimeMs}`;
    } catch {}
  }
  return undefined;
}

/** How the runner is started from its compiled code: `-c` this, then `code` written to stdin first. */
export interface CompiledRunner {
  bootstrap: string;
  code: Buffer;
}

/** A Python string literal of `text` (JSON's escapes are Python's). */
const pyString = (text: string) => JSON.stringify(text);

/** The `-c` program that runs the runner from `size` bytes of marshalled code on stdin. */
function bootstrap(version: string, size: number): string {
  return [
    'import sys, marshal',
    `_dm_runner = sys.stdin.buffer.read(${size})`,
    'try:',
    `    _dm_runner = marshal.loads(_dm_runner) if sys.version == ${pyString(version)} else None`,
    'except Exception:',
    '    _dm_runner = None',
    `exec(_dm_runner or compile(${pyString(PYTHON_RUNNER_SOURCE)}, '<string>', 'exec'))`,
    '',
  ].join('\n');
}

/** The program that makes a compiled runner file (run by the interpreter, in the background). */
function builder(dir: string, key: string, wanted: string): string {
  return [
    'import os, sys, marshal, json',
    'try:',
    '    os.nice(19)',
    'except Exception:',
    '    pass',
    `d, key = ${pyString(dir)}, ${pyString(key)}`,
    `code = marshal.dumps(compile(${pyString(PYTHON_RUNNER_SOURCE)}, '<string>', 'exec'))`,
    "data = (json.dumps({'version': sys.version}) + '\\n').encode() + code",
    "tmp = os.path.join(d, '%s.tmp-%d' % (key, os.getpid()))",
    "with open(tmp, 'wb') as f:",
    '    f.write(data)',
    "os.replace(tmp, os.path.join(d, '%s.%d.marshal' % (key, len(data))))",
    // Files of other runners for this interpreter (earlier versions of dm) are of no more use.
    "prefix = key.split('-')[0] + '-'",
    'for other in os.listdir(d):',
    "    if other.startswith(prefix) and not other.startswith(key + '.'):",
    '        try:',
    '            os.remove(os.path.join(d, other))',
    '        except OSError:',
    '            pass',
    'try:',
    `    os.remove(${pyString(wanted)})`,
    'except OSError:',
    '    pass',
    '',
  ].join('\n');
}

/** Builds in this run at most once. */
let building = false;
const markedNow = new Set<string>();

/**
 * Makes the compiled runner for `python` in `dir`, as a process of its own dm does not wait for
 * (`wait`: resolves when it is done, for tests).
 */
export function buildCompiledRunner(dir: string, python: string, wait = false): Promise<void> {
  const stamp = interpreterStamp(python);
  if (!stamp) return Promise.resolve();
  const key = `${fnv(stamp)}-${runnerDigest()}`;
  return new Promise((resolvePromise) => {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const child = spawn(python, ['-I', '-c', builder(dir, key, join(dir, `${key}.wanted`))], {
        detached: !wait,
        stdio: 'ignore',
        env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
        cwd: '/',
      });
      child.on('error', () => resolvePromise());
      child.on('exit', () => resolvePromise());
      if (!wait) {
        child.unref();
        resolvePromise();
      }
    } catch {
      resolvePromise();
    }
  });
}

/**
 * The compiled runner for `python` that `dir` (pythonRunnerDir) keeps; when there is none, it is
 * made for a later run (at the second run that misses it) and this one compiles the source.
 */
export function compiledRunner(dir: string | undefined, python: string): CompiledRunner | undefined {
  if (dir === undefined) return undefined;
  const stamp = interpreterStamp(python);
  if (!stamp) return undefined;
  const key = `${fnv(stamp)}-${runnerDigest()}`;
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {}
  for (const name of names) {
    const size = /^\.(\d+)\.marshal$/.exec(name.slice(key.length))?.[1];
    if (!name.startsWith(`${key}.`) || size === undefined) continue;
    const path = join(dir, name);
    try {
      const data = readFileSync(path);
      const nl = data.indexOf(10);
      const version =
        nl > 0 ? (JSON.parse(data.toString('utf8', 0, nl)) as { version?: unknown }).version : null;
      if (data.length === Number(size) && typeof version === 'string')
        return { bootstrap: bootstrap(version, data.length - nl - 1), code: data.subarray(nl + 1) };
    } catch {}
    // Not whole: deleted, and made again.
    rmSync(path, { force: true });
    if (!building) {
      building = true;
      void buildCompiledRunner(dir, python);
    }
    return undefined;
  }
  const wanted = join(dir, `${key}.wanted`);
  if (markedNow.has(wanted)) return undefined;
  if (existsSync(wanted)) {
    if (!building) {
      building = true;
      void buildCompiledRunner(dir, python);
    }
  } else {
    markedNow.add(wanted);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(wanted, '');
    } catch {}
  }
  return undefined;
}
