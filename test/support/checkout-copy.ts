/**
 * A copy of this checkout as git would commit it (tracked and untracked files, not ignored ones;
 * uncommitted changes included) with this checkout's node_modules linked in: `npm pack` there builds
 * into the copy's own dist/, never into the dist/ the running suite reads (test/package/).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { repoRoot } from './run-cli.js';

export function copyCheckout(dest: string): void {
  const listed = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed in ${repoRoot}: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0')) {
    // A file deleted but not yet committed is listed and absent.
    if (file === '' || !existsSync(join(repoRoot, file))) continue;
    mkdirSync(dirname(join(dest, file)), { recursive: true });
    cpSync(join(repoRoot, file), join(dest, file));
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(dest, 'node_modules'));
}
