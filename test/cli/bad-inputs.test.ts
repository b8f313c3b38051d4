/**
 * The project's corpus of bad inputs (docs/errors.md): each case runs the real `dm` (bin/dm.js) as a
 * user would, with one mistake, and expects one clear sentence (`error: …` naming what is wrong and
 * where, at most a `hint:` line after it, no stack trace) and the right exit code. New mistakes found
 * by users go here. The last test prints how many cases there are and how many passed.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

interface Case {
  /** What the user got wrong, as a sentence. */
  name: string;
  /** Arguments after `dm`; `$DIR` is a fresh working directory, `$SILENT` a server that never answers. */
  args: string[];
  /** Files written into `$DIR` first (path → content); a value `null` makes a named pipe. */
  files?: Record<string, string | null>;
  /** The config file's content, written before the run. */
  config?: string;
  input?: string;
  code: number;
  /** What the one sentence says. */
  says: RegExp;
  /** Checked after the run (nothing written, file unchanged…). */
  afterwards?: (dir: string, configFile: string) => void;
}

const fixtures = join(repoRoot, 'registry-fixtures');

/** Cases: one per mistake. */
const CASES: Case[] = [
  // Item: dm config set validates as reading does; a bad file never locks dm config out.
  ...(
    [
      ['schemaValidation', 'loose', /schemaValidation 'loose' is not one of strict, warn, off/],
      ['registry', 'not a registry', /registry 'not a registry' is not a registry/],
      ['namespace', 'Bad_NS!', /namespace 'Bad_NS!' is not a Kubernetes namespace name/],
      ['kubeconfig', '/nonexistent/kubeconfig', /kubeconfig '\/nonexistent\/kubeconfig' does not exist/],
      ['checksumKey', 'garbage', /checksumKey is not usable/],
      ['httpTimeout', 'soon', /httpTimeout 'soon' is not a number of seconds/],
      ['managerUrl', 'nowhere', /managerUrl 'nowhere' is not an http\(s\) URL/],
    ] as const
  ).map(
    ([key, value, says]): Case => ({
      name: `dm config set ${key} '${value}'`,
      args: ['config', 'set', key, value],
      code: 2,
      says,
      afterwards: (_dir, configFile) => assert.equal(existsSync(configFile), false, 'nothing written'),
    }),
  ),
  {
    name: 'a config file with a bad schemaValidation: other commands name the file and the key',
    config: 'schemaValidation: loose\n',
    args: ['deployments', 'list'],
    code: 2,
    says: /config\.yaml: schemaValidation 'loose' is not one of strict, warn, off/,
  },
  {
    name: 'a config file with a bad namespace: exit 2 as for every bad key',
    config: 'namespace: Bad_NS!\n',
    args: ['expand', join(fixtures, 'redis', 'v1.0.3', 'example.yaml'), '--registry-dir', fixtures],
    code: 2,
    says: /config\.yaml: namespace 'Bad_NS!'/,
  },
  {
    name: 'a config file with an unknown key: did you mean',
    config: 'registryURL: http://localhost:1\n',
    args: ['version'],
    code: 0,
    says: /warning: .*config\.yaml: unknown config key 'registryURL'/,
  },
  // Item: one HTTP time limit.
  {
    name: '--manager-url at a server that never answers: the HTTP time limit',
    args: ['--manager-url', '$SILENT', '--http-timeout', '1', 'deployments', 'list'],
    code: 5,
    says: /cannot reach the Deployment Manager at http:\/\/127\.0\.0\.1:\d+ \(no answer within 1 s; --http-timeout/,
  },
  {
    name: '--registry-url at a server that never answers: the same limit, the same words',
    args: ['--registry-url', '$SILENT', 'search', 'redis'],
    config: 'httpTimeout: 1\n',
    code: 5,
    says: /cannot reach the registry server at http:\/\/127\.0\.0\.1:\d+ \(no answer within 1 s; --http-timeout/,
  },
  {
    name: '--http-timeout zero',
    args: ['--http-timeout', '0', 'version'],
    code: 2,
    says: /--http-timeout '0' is not a number of seconds/,
  },
  // Item: inputs that are not regular files; pull --to names the user's path.
  {
    name: 'dm expand on a named pipe',
    files: { 'fifo.yaml': null },
    args: ['expand', '$DIR/fifo.yaml'],
    code: 1,
    says: /fifo\.yaml is not a regular file \(a named pipe\)/,
  },
  {
    name: 'dm merge on a named pipe',
    files: { 'fifo.yaml': null },
    args: ['merge', '$DIR/fifo.yaml'],
    code: 1,
    says: /fifo\.yaml is not a regular file \(a named pipe\)/,
  },
  {
    name: 'dm pull --to under /proc',
    args: ['pull', 'redis:v1.0', '--registry-dir', fixtures, '--to', '/proc/x'],
    code: 1,
    says: /^error: cannot write to \/proc\/x: no directory can be made in \/proc$/m,
  },
  {
    name: 'dm pull --to a directory whose parent does not exist',
    args: ['pull', 'redis:v1.0', '--registry-dir', fixtures, '--to', 'no/such/dir'],
    code: 1,
    says: /^error: cannot write to no\/such\/dir: its parent directory no\/such does not exist$/m,
  },
  // Item: `-` reads standard input.
  {
    name: 'dm expand - with invalid YAML on standard input names <stdin>',
    args: ['expand', '-'],
    input: 'resources: [\n',
    code: 1,
    says: /<stdin>/,
  },
  // Item: dm lint on a template directory; --strict.
  {
    name: 'dm lint on a template directory',
    args: ['lint', join(fixtures, 'redis')],
    code: 2,
    says: /redis is a template directory \(versions v1, v1\.0\.1, v1\.0\.3, …\), not a registry root[^\n]*\nhint: run dm lint .*registry-fixtures$/m,
  },
  {
    name: 'dm lint on a version directory',
    args: ['lint', join(fixtures, 'redis', 'v1.0.3')],
    code: 2,
    says: /v1\.0\.3 is a version directory \(it holds the template redis\.jinja\), not a registry root/,
  },
  {
    name: 'dm lint --strict on a registry with warnings only',
    files: { 'reg/web/v1.0.0/web.jinja': 'resources: []\n', 'reg/web/notes/a.txt': 'hi\n' },
    args: ['lint', '$DIR/reg', '--strict', '--no-examples', '-o', 'json'],
    code: 4,
    says: /registry '.*reg' has 2 lint warnings, and --strict makes warnings fail/,
  },
];

let silent: Server;
let silentUrl = '';
const sockets = new Set<Socket>();
const outcomes: boolean[] = [];

describe('the corpus of bad inputs', () => {
  before(async () => {
    // A server that accepts connections and never answers.
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  });
  after(() => {
    for (const s of sockets) s.destroy();
    silent.close();
    const passed = outcomes.filter(Boolean).length;
    process.stdout.write(
      `bad inputs: ${CASES.length} tried, ${passed} with one clear sentence and the right exit code\n`,
    );
  });

  for (const c of CASES) {
    it(c.name, async () => {
      let ok = false;
      try {
        const env = await isolatedEnv();
        const dir = await mkdtemp(join(tmpdir(), 'dm-bad-input-'));
        for (const [path, content] of Object.entries(c.files ?? {})) {
          mkdirSync(dirname(join(dir, path)), { recursive: true });
          if (content === null) execFileSync('mkfifo', [join(dir, path)]);
          else writeFileSync(join(dir, path), content);
        }
        const configFile = join(env.XDG_CONFIG_HOME!, 'dm', 'config.yaml');
        if (c.config !== undefined) {
          mkdirSync(join(env.XDG_CONFIG_HOME!, 'dm'), { recursive: true });
          writeFileSync(configFile, c.config);
        }
        const before = c.config === undefined ? undefined : readFileSync(configFile, 'utf8');
        const args = c.args.map((a) => a.replaceAll('$DIR', dir).replaceAll('$SILENT', silentUrl));
        const r = await runDm(args, {
          env,
          cwd: dir,
          killAfterMs: 120_000,
          ...(c.input === undefined ? {} : { input: c.input }),
        });
        assert.equal(r.code, c.code, `exit code of dm ${args.join(' ')}\n${r.stderr}`);
        assert.match(r.stderr, c.says);
        assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
        const lines = r.stderr.split('\n').filter((l) => l !== '');
        if (c.code !== 0) {
          assert.equal(
            lines.filter((l) => l.startsWith('error: ')).length,
            1,
            `one error sentence:\n${r.stderr}`,
          );
          const error = lines.findIndex((l) => l.startsWith('error: '));
          assert.ok(
            lines.slice(error + 1).every((l) => l.startsWith('hint: ')),
            `only a hint after the error:\n${r.stderr}`,
          );
        }
        if (before !== undefined)
          assert.equal(readFileSync(configFile, 'utf8'), before, 'config file unchanged');
        c.afterwards?.(dir, configFile);
        ok = true;
      } finally {
        outcomes.push(ok);
      }
    });
  }
});
