/**
 * The README's tour runs as written: every shell line of its `sh` blocks under "A short tour" runs
 * in one real bash session, in order, from a fresh copy of examples/ next to registry-fixtures/,
 * against a real dm-registry started here (for `localhost:8080`, rewritten to its port) and the
 * Kubernetes stand-in with the real kubectl (through KUBECONFIG) for the deploy commands. Each
 * command's exit status is checked: 0, or the N of an `exit N` in its comment. The commands of
 * "Running dm-registry for an organisation" run the same way against the stand-in and an
 * organisation's server as the README describes it, on PostgreSQL: a dm-registry on a database of
 * this process's private cluster (its URL for `https://registry.acme.example`, its admin token as
 * `$ADMIN`, its database for the `DM_REGISTRY_DB=postgres://…` the README gives `dm-registry token
 * create`), and the token that command prints then reads acme's registry on that server; where
 * PostgreSQL is not installed, the tour's own server (SQLite) stands in. `npm install && npm start` and `npm test` are what runs
 * this file.
 *
 * `npx dm` is a bash function that runs this checkout's bin/dm.js: npx itself would resolve the same
 * file from the repository's package.json, which a temporary directory does not have.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type KubeStandin, startKubeStandin } from './kube-standin/server.js';
import { DIALECTS, postgresDatabase } from './server/helpers.js';
import { sectionCommands, type TourCommand } from './support/readme-commands.js';
import { type RunningRegistry, startRegistry } from './support/registry-server.js';
import { dmBin, repoRoot } from './support/run-cli.js';

/** The commands of the README's "A short tour". */
export function tourCommands(readme: string): TourCommand[] {
  return sectionCommands(readme, 'A short tour');
}

/** Runs `commands` in one bash session in `cwd`; each one's output and exit status land in `dir`. */
async function runSession(
  commands: readonly TourCommand[],
  rewrite: (command: string) => string,
  cwd: string,
  dir: string,
  env: Record<string, string>,
): Promise<{ failures: string[]; out: (prefix: string) => string }> {
  const lines = [`npx() { [ "$1" = dm ] || return 127; shift; "${process.execPath}" "${dmBin}" "$@"; }`];
  lines.push(`dm-registry() { "${process.execPath}" "${join(repoRoot, 'bin', 'dm-registry.js')}" "$@"; }`);
  commands.forEach((c, i) => {
    lines.push(
      `{ ${rewrite(c.command)}\n} >"${dir}/out.${i}" 2>"${dir}/err.${i}"; echo $? >"${dir}/status.${i}"`,
    );
  });
  const code = await runBash(lines.join('\n'), cwd, {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    XDG_STATE_HOME: join(dir, 'state'),
    NO_COLOR: '1',
    ...env,
  });
  assert.equal(code, 0, 'the script ran to its end');
  const failures: string[] = [];
  commands.forEach((c, i) => {
    const status = Number(readFileSync(join(dir, `status.${i}`), 'utf8').trim());
    if (status !== c.expectedExit) {
      const err = readFileSync(join(dir, `err.${i}`), 'utf8');
      failures.push(`${c.command}: exit ${status}, expected ${c.expectedExit}\n${err}`);
    }
  });
  const out = (prefix: string) => {
    const i = commands.findIndex((c) => c.command.startsWith(prefix));
    assert.notEqual(i, -1, `a command starts with ${prefix}`);
    return readFileSync(join(dir, `out.${i}`), 'utf8');
  };
  return { failures, out };
}

function runBash(script: string, cwd: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

/** The admin token of the registry this test starts, as the README's `$ADMIN`. */
const ADMIN = 'readme-admin-token';
/**
 * The organisation's database as the README names it: the database of the server this test
 * starts (where PostgreSQL is installed; else a fresh SQLite file), so `dm-registry token create`
 * writes where that server reads only because the README's line says where.
 */
const ACME_DATABASE = 'postgres://dm@db.acme.example/registry';

describe('README tour', () => {
  let registry: RunningRegistry;
  let standin: KubeStandin;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dm-readme-'));
    [registry, standin] = await Promise.all([
      startRegistry(['registry-fixtures'], { DM_ADMIN_TOKEN: ADMIN }),
      startKubeStandin(),
    ]);
  });
  after(async () => {
    await Promise.all([registry?.stop(), standin?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('tourCommands() reads commands, `;` lists and `exit N` comments', () => {
    const readme = "## A short tour\n```sh\nnpx dm a 'x # y'   # exit 4\nnpx dm b; npx dm c\n```\n## Next\n";
    assert.deepEqual(tourCommands(readme), [
      { command: "npx dm a 'x # y'", expectedExit: 4 },
      { command: 'npx dm b', expectedExit: 0 },
      { command: 'npx dm c', expectedExit: 0 },
    ]);
  });

  it('sectionCommands() joins continued lines and keeps a here-document with its command', () => {
    const readme =
      "## Org\n```sh\ncat > a.yaml <<'YAML'\nx: 1   # not a comment to read\nYAML\ncurl -X POST \\\n  -d '{}' u   # exit 3\n```\n";
    assert.deepEqual(sectionCommands(readme, 'Org'), [
      { command: "cat > a.yaml <<'YAML'\nx: 1   # not a comment to read\nYAML", expectedExit: 0 },
      { command: "curl -X POST  -d '{}' u", expectedExit: 3 },
    ]);
  });

  it('every command of the README tour runs with the exit status the README says', async () => {
    const commands = tourCommands(readFileSync(join(repoRoot, 'README.md'), 'utf8'));
    assert.ok(commands.length >= 20, `the tour has its commands (found ${commands.length})`);
    const work = join(dir, 'work');
    cpSync(join(repoRoot, 'examples'), join(work, 'examples'), { recursive: true });
    symlinkSync(join(repoRoot, 'registry-fixtures'), join(work, 'registry-fixtures'));
    const port = new URL(registry.url).port;
    const { failures, out } = await runSession(
      commands,
      (c) => c.replaceAll('localhost:8080', `127.0.0.1:${port}`),
      work,
      dir,
      { KUBECONFIG: standin.writeKubeconfig(dir) },
    );
    assert.deepEqual(failures, []);
    assert.match(out('npx dm search redis'), /redis/);
    assert.match(out('npx dm deployments list'), /prod/);
    assert.match(out('npx dm manifests prod'), /applied/);
    assert.match(out('npx dm template render'), /containerPort: 8443/);
  });

  it('every command of "Running dm-registry for an organisation" runs as written', async () => {
    const commands = sectionCommands(
      readFileSync(join(repoRoot, 'README.md'), 'utf8'),
      'Running dm-registry for an organisation',
    );
    assert.ok(commands.length >= 5, `the section has its commands (found ${commands.length})`);
    const work = join(dir, 'org');
    const session = join(dir, 'org-session');
    mkdirSync(session);
    mkdirSync(work);
    symlinkSync(join(repoRoot, 'registry-fixtures'), join(work, 'registry-fixtures'));
    // The organisation's server (with ADMIN as its admin token) runs on PostgreSQL, as the README's.
    // Its GitHub is a closed port of this machine: the registry the README adds syncs in the
    // background, and fails there, without any request leaving the machine.
    const db = DIALECTS.includes('postgres') ? await postgresDatabase() : undefined;
    const env = { DM_ADMIN_TOKEN: ADMIN, GITHUB_API_URL: 'http://127.0.0.1:9' };
    const org = db ? await startRegistry([join(repoRoot, 'registry-fixtures')], env, [], { db }) : registry;
    try {
      const { failures, out } = await runSession(
        commands,
        (c) =>
          c
            .replaceAll('https://registry.acme.example', org.url)
            .replaceAll(ACME_DATABASE, db ?? `file:${join(session, 'registry.db')}`),
        work,
        session,
        { KUBECONFIG: standin.writeKubeconfig(session), ADMIN },
      );
      assert.deepEqual(failures, []);
      assert.match(
        out(
          'npx dm deploy acme-registry.yaml --name acme-registry --registry-dir registry-fixtures --dry-run',
        ),
        /acme-registry/,
      );
      assert.match(out('curl'), /"organisation":"acme"/);
      const token = out(`DM_REGISTRY_DB=${ACME_DATABASE} dm-registry token create`).trim();
      assert.match(token, /^dmr_\S+$/);
      if (db) {
        // The token was written to the server's database: the running server takes it (its token
        // watch) and it reads acme's registry.
        let names: string[] = [];
        for (let i = 0; i < 100 && !names.includes('github.com/acme/templates'); i++) {
          const res = await fetch(`${org.url}/api/v1/registries`, {
            headers: { authorization: `Bearer ${token}` },
          });
          if (res.status === 200) {
            names = ((await res.json()) as { registries: { name: string }[] }).registries.map((r) => r.name);
          }
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.ok(names.includes('github.com/acme/templates'), `the token reads ${names.join(', ')}`);
      }
    } finally {
      if (org !== registry) await org.stop();
    }
  });
});
