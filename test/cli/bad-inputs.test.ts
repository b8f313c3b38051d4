/**
 * The project's corpus of bad inputs (docs/errors.md): each case runs the real `dm` (bin/dm.js) as a
 * user would, with one mistake, and expects one clear sentence (`error: …` naming what is wrong and
 * where, at most a `hint:` line after it, no stack trace) and the right exit code. New mistakes found
 * by users go here. The last test prints how many cases there are and how many passed.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type KubeStandin, startKubeStandin } from '../kube-standin/server.js';
import { isolatedEnv, repoRoot, runDm, runProcess } from '../support/run-cli.js';

interface Case {
  /** What the user got wrong, as a sentence. */
  name: string;
  /** The program run: `dm` (default) or `dm-registry`. */
  program?: 'dm' | 'dm-registry';
  /**
   * Arguments after the program; `$DIR` is a fresh working directory, `$SILENT` a server that never
   * answers, `$BAD_TOKEN_KUBECONFIG` a kubeconfig whose token the Kubernetes stand-in refuses.
   */
  args: string[];
  /** Files written into `$DIR` first (path → content); a value `null` makes a named pipe. */
  files?: Record<string, string | null>;
  /** The config file's content, written before the run. */
  config?: string;
  /** Environment variables set for the run. */
  env?: Record<string, string>;
  input?: string;
  code: number;
  /** What the one sentence says. */
  says: RegExp;
  /** Run before dm (after the files are written), in the working directory. */
  setup?: (dir: string, env: Record<string, string>) => Promise<void>;
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
    says: /cannot reach the Deployment Manager at http:\/\/127\.0\.0\.1:\d+: no answer within 1 s \(--http-timeout/,
  },
  {
    name: '--registry-url at a server that never answers: the same limit, the same words',
    args: ['--registry-url', '$SILENT', 'search', 'redis'],
    config: 'httpTimeout: 1\n',
    code: 5,
    says: /cannot reach the registry server at http:\/\/127\.0\.0\.1:\d+: no answer within 1 s \(--http-timeout/,
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
  // Item: lock file, schema, search flags.
  {
    name: 'dm.lock is a directory',
    files: { 'dm.lock/x': 'x\n', 'config.yaml': 'resources: []\n' },
    args: ['install', '--registry-dir', fixtures],
    code: 2,
    says: /^error: .*dm\.lock is a directory, not a file$/m,
  },
  {
    name: 'a lock entry with version: banana',
    files: { 'config.yaml': 'resources:\n- {name: c, type: "redis:v1.0"}\n' },
    setup: async (dir, env) => {
      const r = await runDm(['install', '--registry-dir', fixtures], { env, cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      const lock = join(dir, 'dm.lock');
      writeFileSync(lock, readFileSync(lock, 'utf8').replace(/version: v1\.0\.3/, 'version: banana'));
    },
    args: ['install', '--registry-dir', fixtures, '--frozen-lockfile'],
    code: 4,
    says: /dm\.lock: references\["[^"]+redis:v1\.0"\]\.version is 'banana', not a version/,
  },
  {
    name: 'a schema whose property type is misspelt',
    files: {
      't.jinja': 'resources: []\n',
      't.jinja.schema': 'properties:\n  port:\n    type: integr\n',
      'c.yaml': 'imports:\n- path: t.jinja\n- path: t.jinja.schema\nresources:\n- {name: a, type: t.jinja}\n',
    },
    args: ['expand', 'c.yaml'],
    code: 1,
    says: /^error: .*t\.jinja\.schema: properties\.port\.type is 'integr', not one of array, boolean, integer, null, number, object, string$/m,
  },
  {
    name: 'dm search --limit 100000',
    args: ['search', 'redis', '--registry-url', 'http://127.0.0.1:9', '--limit', '100000'],
    code: 2,
    says: /--limit 100000 is more than 100, the most hits a registry server gives per page/,
  },
  // Item: dm-registry --db with a scheme it does not know.
  {
    name: 'dm-registry start --db mysql://x/y',
    program: 'dm-registry',
    args: ['start', '--db', 'mysql://x/y', '--port', '0'],
    code: 2,
    says: /--db 'mysql:\/\/x\/y': the scheme 'mysql:' is not supported; use file:<path> \(or a path\) for SQLite, or postgres:\/\/… \(postgresql:\/\/…\) for PostgreSQL/,
    afterwards: (dir) => assert.deepEqual(readdirSync(dir), [], 'nothing created'),
  },
  // Item: what the cluster said, said as it said it; "cannot reach" only when nothing answered.
  {
    name: 'a kubeconfig whose server refuses connections: cannot reach, with the context',
    files: {
      'config.yaml': 'resources:\n- {name: c, type: v1/ConfigMap}\n',
      kubeconfig:
        'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: nowhere, context: {cluster: c, user: u}}]\ncurrent-context: nowhere\n',
    },
    args: ['--kubeconfig', '$DIR/kubeconfig', 'deploy', 'config.yaml', '--name', 'c'],
    code: 5,
    says: /^error: cannot reach the cluster at https:\/\/127\.0\.0\.1:1 \(context 'nowhere'\)$/m,
  },
  {
    name: "a kubeconfig whose token the cluster refuses: the cluster's words and the context, exit 1",
    files: { 'config.yaml': 'resources:\n- {name: c, type: v1/ConfigMap}\n' },
    args: ['--kubeconfig', '$BAD_TOKEN_KUBECONFIG', 'deploy', 'config.yaml', '--name', 'c'],
    code: 1,
    says: /^error: the cluster at https:\/\/127\.0\.0\.1:\d+ refused the credentials of context 'standin': You must be logged in to the server \((Unauthorized|the server has asked for the client to provide credentials)\)$/m,
  },
  {
    name: 'the same refused token on a dry run: refused, not planned offline',
    files: { 'config.yaml': 'resources:\n- {name: c, type: v1/ConfigMap}\n' },
    args: ['--kubeconfig', '$BAD_TOKEN_KUBECONFIG', 'deploy', 'config.yaml', '--name', 'c', '--dry-run'],
    code: 1,
    says: /refused the credentials of context 'standin': You must be logged in to the server \((Unauthorized|the server has asked for the client to provide credentials)\)$/m,
    afterwards: stateUntouched,
  },
  // Item: one decision on a configuration's top-level keys; a dry run writes nothing.
  {
    name: 'dm expand of a configuration with resource: for resources:',
    files: { 'typo.yaml': 'resource:\n- {name: c, type: v1/ConfigMap}\n' },
    args: ['expand', 'typo.yaml'],
    code: 4,
    says: /^error: typo\.yaml: unknown top-level key 'resource' \(did you mean 'resources'\?\); a configuration has only imports, resources, outputs$/m,
  },
  {
    name: 'dm expand of a configuration with a key DM never had',
    files: { 'foo.yaml': 'foo: bar\nresources: []\n' },
    args: ['expand', 'foo.yaml'],
    code: 4,
    says: /^error: foo\.yaml: unknown top-level key 'foo'; a configuration has only imports, resources, outputs$/m,
  },
  {
    name: 'dm deploy --dry-run of a mistyped configuration: refused, and no deployments database made',
    files: { 'typo.yaml': 'resource:\n- {name: c, type: v1/ConfigMap}\n' },
    args: ['deploy', 'typo.yaml', '--name', 'prod', '--dry-run'],
    code: 4,
    says: /typo\.yaml: unknown top-level key 'resource'/,
    afterwards: stateUntouched,
  },
  // Item: --kubeconfig names a file: a typo says so, as `dm config set kubeconfig` does.
  {
    name: '--kubeconfig naming a file that does not exist',
    files: { 'config.yaml': 'resources:\n- {name: c, type: v1/ConfigMap}\n' },
    args: ['--kubeconfig', 'kubeconfg', 'deploy', 'config.yaml', '--name', 'c'],
    code: 3,
    says: /^error: --kubeconfig 'kubeconfg' does not exist$/m,
  },
  {
    name: '--kubeconfig naming a file that does not exist, on a dry run: refused, not planned offline',
    files: { 'config.yaml': 'resources:\n- {name: c, type: v1/ConfigMap}\n' },
    args: ['--kubeconfig', 'kubeconfg', 'deploy', 'config.yaml', '--name', 'c', '--dry-run'],
    code: 3,
    says: /^error: --kubeconfig 'kubeconfg' does not exist$/m,
    afterwards: stateUntouched,
  },
  {
    name: '--kubeconfig naming a directory',
    files: { 'kube/x': 'x\n', 'config.yaml': 'resources:\n- {name: c, type: v1/ConfigMap}\n' },
    args: ['--kubeconfig', 'kube', 'deploy', 'config.yaml', '--name', 'c', '--dry-run'],
    code: 2,
    says: /^error: --kubeconfig 'kube' is a directory, not a file$/m,
    afterwards: stateUntouched,
  },
  // Item: a template cut short says so in Jinja's words, with its line.
  {
    name: 'dm template render of a template that ends inside a call',
    files: { 'cut.jinja': 'a: 1\nb: {{ lookup(' },
    args: ['template', 'render', 'cut.jinja'],
    code: 1,
    says: /^error: cut\.jinja:2: cannot compile template: unexpected end of template$/m,
  },
  // Item: --registry-dir names a registry root; a typo in it is said even when dm.lock answers.
  {
    name: '--registry-dir naming a template directory',
    args: ['resolve', 'redis:v1.0', '--registry-dir', join(fixtures, 'redis')],
    code: 2,
    says: /^error: .*redis is a template directory \(versions v1, v1\.0\.1, v1\.0\.3, …\), not a registry root: --registry-dir names the directory that holds <template>\/<version>\/ directories\nhint: --registry-dir .*registry-fixtures$/m,
  },
  {
    name: '--registry-dir naming a version directory',
    args: ['expand', 'redis:v1.0', '--registry-dir', join(fixtures, 'redis', 'v1.0.3')],
    code: 2,
    says: /v1\.0\.3 is a version directory \(it holds the template redis\.jinja\), not a registry root/,
  },
  {
    name: '--registry-dir with a typo, when dm.lock and the cache could answer without it',
    files: { 'config.yaml': 'resources:\n- {name: c, type: "github.com/dm-samples/templates/redis:v1.0"}\n' },
    setup: async (dir, env) => {
      const r = await runDm(['install', '--registry-dir', fixtures], { env, cwd: dir });
      assert.equal(r.code, 0, r.stderr);
    },
    args: ['expand', 'config.yaml', '--registry-dir', `${fixtures}z`],
    code: 3,
    says: /^error: registry directory '.*registry-fixturesz' does not exist$/m,
  },
  // Item: dm push takes a version directory or a reference, and says which it was given.
  {
    name: 'dm push of a template directory',
    args: ['push', join(fixtures, 'redis'), 'oci://127.0.0.1:9/acme/templates/redis', '--plain-http'],
    code: 2,
    says: /^error: .*redis is a template directory \(versions v1, v1\.0\.1, v1\.0\.3, …\), not a version directory: dm push publishes one version\nhint: push one of them: dm push .*redis\/v1 oci:\/\/…$/m,
  },
  {
    name: 'dm push of a registry root',
    args: ['push', fixtures, 'oci://127.0.0.1:9/acme/templates/redis', '--plain-http'],
    code: 2,
    says: /^error: .*registry-fixtures is not a version directory: 'registry-fixtures' is not a version name; dm push publishes one <template>\/<version>\/ directory$/m,
  },
  {
    name: 'dm push of a directory that does not exist',
    args: ['push', './redis/v1.1', 'oci://127.0.0.1:9/acme/templates/redis', '--plain-http'],
    code: 3,
    says: /^error: '\.\/redis\/v1\.1' is neither a file nor a template reference$/m,
  },
  {
    name: 'dm push of a template file',
    args: ['push', join(fixtures, 'redis', 'v1.1', 'redis.jinja'), 'oci://127.0.0.1:9/acme/templates/redis'],
    code: 2,
    says: /^error: the source '.*redis\.jinja' is a template file; this command takes a directory or a registry reference$/m,
  },
  // Item: --imports-dir names a directory; a typo is not "nothing found there".
  {
    name: 'dm expand --imports-dir naming a directory that does not exist',
    files: { 'config.yaml': 'resources:\n- {name: c, type: v1/ConfigMap}\n' },
    args: ['expand', 'config.yaml', '--imports-dir', './templtes'],
    code: 3,
    says: /^error: --imports-dir '\.\/templtes' does not exist$/m,
  },
  {
    name: 'dm deploy --dry-run --imports-dir naming a file',
    files: { 'config.yaml': 'resources:\n- {name: c, type: v1/ConfigMap}\n' },
    args: ['deploy', 'config.yaml', '--name', 'c', '--dry-run', '--imports-dir', 'config.yaml'],
    code: 2,
    says: /^error: --imports-dir 'config\.yaml' is not a directory$/m,
    afterwards: stateUntouched,
  },
  // Item: a file name with a typo: did you mean the file next to it.
  {
    name: 'dm expand of a configuration whose name has a typo',
    files: { 'config.yaml': 'resources: []\n' },
    args: ['expand', 'confg.yaml'],
    code: 3,
    says: /^error: 'confg\.yaml' is neither a file nor a template reference\nhint: did you mean config\.yaml\?$/m,
  },
  {
    name: 'dm install of a configuration whose name has a typo',
    files: { 'config.yaml': 'resources: []\n' },
    args: ['install', 'confg.yaml'],
    code: 3,
    says: /^error: configuration .*confg\.yaml does not exist\nhint: did you mean .*config\.yaml\?$/m,
  },
  {
    name: 'dm merge of a file whose name has a typo',
    files: { 'base.yaml': 'a: 1\n', 'site.yaml': 'b: 2\n' },
    args: ['merge', 'base.yaml', 'sit.yaml'],
    code: 3,
    says: /^error: sit\.yaml does not exist\nhint: did you mean site\.yaml\?$/m,
  },
  {
    name: 'dm expand -f with a typo in a values file under a directory',
    files: { 'config.yaml': 'resources: []\n', 'values/prod.yaml': 'a: 1\n' },
    args: ['expand', 'config.yaml', '-f', 'values/prd.yaml'],
    code: 3,
    says: /^error: values\/prd\.yaml does not exist\nhint: did you mean values\/prod\.yaml\?$/m,
  },
  // Item: DM_REGISTRY_URL is checked as --registry-url is.
  {
    name: 'DM_REGISTRY_URL without a scheme',
    env: { DM_REGISTRY_URL: 'localhost:8080' },
    args: ['search', 'redis'],
    code: 2,
    says: /^error: DM_REGISTRY_URL 'localhost:8080' is not an http\(s\) URL\nhint: for example DM_REGISTRY_URL=http:\/\/localhost:8080$/m,
  },
  // Item: a file where a directory is needed is a usage error (exit 2), as a directory where a file is.
  {
    name: 'dm lint of a file',
    files: { 'config.yaml': 'resources: []\n' },
    args: ['lint', 'config.yaml'],
    code: 2,
    says: /^error: 'config\.yaml' is not a directory\nhint: give the root directory of a registry/m,
  },
  {
    name: '--registry-dir naming a file',
    args: ['resolve', 'redis:v1.0', '--registry-dir', join(fixtures, 'redis', 'v1.1', 'redis.jinja')],
    code: 2,
    says: /redis\.jinja' is not a directory/,
  },
  // Item: completion.
  {
    name: 'dm completion for a shell it has no script for',
    args: ['completion', 'tcsh'],
    code: 2,
    says: /^error: shell 'tcsh' is not one of bash, zsh, fish$/m,
  },
];

/** Nothing under the XDG state directory: no deployments database was made. */
function stateUntouched(_dir: string, configFile: string): void {
  const state = join(dirname(dirname(dirname(configFile))), 'state');
  assert.equal(existsSync(state), false, `${state} was created`);
}

let silent: Server;
let silentUrl = '';
/** A Kubernetes stand-in, and a kubeconfig for it whose token it refuses. */
let standin: KubeStandin;
let badTokenKubeconfig = '';
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
    standin = await startKubeStandin();
    badTokenKubeconfig = standin.writeKubeconfig(await mkdtemp(join(tmpdir(), 'dm-bad-token-')), {
      wrongToken: true,
    });
  });
  after(async () => {
    await standin?.close();
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
        const env = { ...(await isolatedEnv()), ...c.env };
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
        await c.setup?.(dir, env);
        const before = c.config === undefined ? undefined : readFileSync(configFile, 'utf8');
        const args = c.args.map((a) =>
          a
            .replaceAll('$DIR', dir)
            .replaceAll('$SILENT', silentUrl)
            .replaceAll('$BAD_TOKEN_KUBECONFIG', badTokenKubeconfig),
        );
        const options = {
          env,
          cwd: dir,
          killAfterMs: 120_000,
          ...(c.input === undefined ? {} : { input: c.input }),
        };
        const r =
          c.program === 'dm-registry'
            ? await runProcess(process.execPath, [join(repoRoot, 'bin', 'dm-registry.js'), ...args], {
                ...options,
                env: { ...process.env, NO_COLOR: '1', ...env },
              })
            : await runDm(args, options);
        assert.equal(r.code, c.code, `exit code of dm ${args.join(' ')}\n${r.stderr}`);
        assert.match(r.stderr, c.says);
        assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
        const lines = r.stderr.split('\n').filter((l) => l !== '');
        if (c.code !== 0) {
          // dm says `error: …`; dm-registry, a server's command line, `dm-registry: …`.
          const prefix = c.program === 'dm-registry' ? 'dm-registry: ' : 'error: ';
          assert.equal(
            lines.filter((l) => l.startsWith(prefix)).length,
            1,
            `one error sentence:\n${r.stderr}`,
          );
          const error = lines.findIndex((l) => l.startsWith(prefix));
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
