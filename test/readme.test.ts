/**
 * The README's tour runs as written: every shell line of its `sh` blocks under "A short tour" runs
 * in one real bash session, in order, from a fresh copy of examples/ next to registry-fixtures/,
 * against a real dm-registry started here (for `localhost:8080`, rewritten to its port) and the
 * Kubernetes stand-in with the real kubectl (through KUBECONFIG) for the deploy commands. Each
 * command's exit status is checked: 0, or the N of an `exit N` in its comment.
 *
 * `npx dm` is a bash function that runs this checkout's bin/dm.js: npx itself would resolve the same
 * file from the repository's package.json, which a temporary directory does not have.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type KubeStandin, startKubeStandin } from './kube-standin/server.js';
import { type RunningRegistry, startRegistry } from './support/registry-server.js';
import { dmBin, repoRoot } from './support/run-cli.js';

export interface TourCommand {
  /** The command as the README writes it (comment removed). */
  command: string;
  /** Exit status the README promises: `exit N` in the line's comment, else 0. */
  expectedExit: number;
}

/** Splits `text` at `sep` characters outside single or double quotes. */
function splitOutsideQuotes(text: string, sep: string): string[] {
  const parts: string[] = [];
  let quote: string | undefined;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (text.startsWith(sep, i)) {
      parts.push(current);
      current = '';
      i += sep.length - 1;
      continue;
    }
    current += c;
  }
  parts.push(current);
  return parts;
}

/** The commands of the README's `sh` blocks in the "A short tour" section, in order. */
export function tourCommands(readme: string): TourCommand[] {
  const section = readme.split(/^## A short tour$/m)[1]?.split(/^## /m)[0] ?? '';
  const commands: TourCommand[] = [];
  for (const block of section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    for (const raw of (block[1] ?? '').split('\n')) {
      const [code = '', ...comment] = splitOutsideQuotes(raw, ' #');
      const expectedExit = Number(/\bexit (\d+)/.exec(comment.join(' #'))?.[1] ?? 0);
      for (const command of splitOutsideQuotes(code, ';')) {
        if (command.trim() !== '') commands.push({ command: command.trim(), expectedExit });
      }
    }
  }
  return commands;
}

function runBash(script: string, cwd: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

describe('README tour', () => {
  let registry: RunningRegistry;
  let standin: KubeStandin;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dm-readme-'));
    [registry, standin] = await Promise.all([startRegistry(['registry-fixtures']), startKubeStandin()]);
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

  it('every command of the README tour runs with the exit status the README says', async () => {
    const commands = tourCommands(readFileSync(join(repoRoot, 'README.md'), 'utf8'));
    assert.ok(commands.length >= 20, `the tour has its commands (found ${commands.length})`);
    const work = join(dir, 'work');
    cpSync(join(repoRoot, 'examples'), join(work, 'examples'), { recursive: true });
    symlinkSync(join(repoRoot, 'registry-fixtures'), join(work, 'registry-fixtures'));
    const port = new URL(registry.url).port;
    const lines = [`npx() { [ "$1" = dm ] || return 127; shift; "${process.execPath}" "${dmBin}" "$@"; }`];
    commands.forEach((c, i) => {
      const command = c.command.replaceAll('localhost:8080', `127.0.0.1:${port}`);
      lines.push(`{ ${command}\n} >"${dir}/out.${i}" 2>"${dir}/err.${i}"; echo $? >"${dir}/status.${i}"`);
    });
    const code = await runBash(lines.join('\n'), work, {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
      XDG_STATE_HOME: join(dir, 'state'),
      KUBECONFIG: standin.writeKubeconfig(dir),
      NO_COLOR: '1',
    });
    assert.equal(code, 0, 'the tour script ran to its end');
    const failures: string[] = [];
    commands.forEach((c, i) => {
      const status = Number(readFileSync(join(dir, `status.${i}`), 'utf8').trim());
      if (status !== c.expectedExit) {
        const err = readFileSync(join(dir, `err.${i}`), 'utf8');
        failures.push(`${c.command}: exit ${status}, expected ${c.expectedExit}\n${err}`);
      }
    });
    assert.deepEqual(failures, []);
    const out = (i: number) => readFileSync(join(dir, `out.${i}`), 'utf8');
    const index = (prefix: string) => commands.findIndex((c) => c.command.startsWith(prefix));
    assert.match(out(index('npx dm search redis')), /redis/);
    assert.match(out(index('npx dm deployments list')), /prod/);
    assert.match(out(index('npx dm manifests prod')), /applied/);
    assert.match(out(index('npx dm template render')), /containerPort: 8443/);
  });
});
