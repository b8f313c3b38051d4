#!/usr/bin/env node
// npm's `prepare` script: builds a clone on `npm install` (README.md, "Tests"). `npm pack` and
// `npm publish` run it too, right after `prepack`, which has just built what is packed
// (docs/packaging.md): the build runs once either way.
import { spawnSync } from 'node:child_process';

if (process.env.npm_command === 'pack' || process.env.npm_command === 'publish') process.exit(0);
const npm = process.env.npm_execpath;
const built = npm
  ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' })
  : spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
process.exit(built.status ?? 1);
