#!/usr/bin/env node
// `dm --version` is answered before the CLI is loaded: it is run in scripts and must start fast.
if (process.argv.length === 3 && process.argv[2] === '--version') {
  const { readFileSync } = await import('node:fs');
  process.stdout.write(
    `${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`,
  );
} else {
  await import('../dist/client/src/cli/main.js');
}
