#!/usr/bin/env node
// Bundles what `dm` runs (docs/client.md, "The CLI bundle"), from the compiled modules in
// dist/ (run after `tsc`; `npm run build` runs both):
//   dist/bundle/cli/        the `dm` CLI: main.js and prestart.js (bin/dm.js loads them), the
//                           modules commands load lazily in chunks beside them, and
//                           snapshot-builder.js (makes the Jinja renderer's startup snapshot);
//   dist/bundle/renderers/  each rendering process as one file: jinja-child.cjs (templates of
//                           `dm expand`), blueprint-child.cjs (blueprint executions); a renderer
//                           may read only its own file.
// Loading a few files instead of some 200 modules is most of `dm expand`'s start-up. The registry
// server and the tests use the compiled modules themselves.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');
const out = join(dist, 'bundle');
const stamp = join(out, '.built-from');

/** The newest modification time among the compiled modules the bundles are made of. */
function newestInput(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestInput(path));
    else if (entry.name.endsWith('.js')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}
const inputs = newestInput(join(dist, 'client/src'));
// Up to date: nothing to do (two test runs in one checkout then never rebuild under each other).
if (existsSync(stamp) && statSync(stamp).mtimeMs >= inputs) process.exit(0);

// Built beside, then swapped in: a run reading the bundle never sees a half-written one.
const building = join(dist, `bundle.building-${process.pid}`);

// Native addons and drivers stay in node_modules: loaded from there when a command needs them.
const external = ['better-sqlite3', 'pg', 'pg-native'];

rmSync(building, { recursive: true, force: true });
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  legalComments: 'none',
  external,
  // Tells fork-renderer.ts where the renderers' bundles are, relative to the CLI's modules.
  define: { DM_RENDERER_BUNDLES: JSON.stringify('../renderers') },
};
// The renderers first: the CLI is told each one's digest, which keys its startup snapshot in the
// user's cache directory (client/src/expand/sandbox/renderer-snapshot.ts).
await build({
  ...common,
  entryPoints: {
    'jinja-child': join(dist, 'client/src/expand/sandbox/jinja-child.js'),
    'blueprint-child': join(dist, 'client/src/blueprint/sandbox-child.js'),
  },
  outdir: join(building, 'renderers'),
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  // A renderer reads nothing but its own file: no external module may remain.
  external: [],
});
const digests = {};
for (const name of ['jinja-child', 'blueprint-child']) {
  const content = readFileSync(join(building, 'renderers', `${name}.cjs`));
  digests[name] = createHash('sha256').update(content).digest('hex').slice(0, 32);
}
// The Python runner's digest keys its compiled code in the cache directory too
// (client/src/expand/python/runner-cache.ts).
const { PYTHON_RUNNER_SOURCE } = await import(join(dist, 'client/src/expand/python/runner-source.js'));
const runnerDigest = createHash('sha256').update(PYTHON_RUNNER_SOURCE).digest('hex').slice(0, 32);
await build({
  ...common,
  define: {
    ...common.define,
    DM_RENDERER_DIGESTS: JSON.stringify(digests),
    DM_PYTHON_RUNNER_DIGEST: JSON.stringify(runnerDigest),
  },
  entryPoints: {
    main: join(dist, 'client/src/cli/main.js'),
    prestart: join(dist, 'client/src/cli/prestart.js'),
    // The expansion agent and its client (docs/client.md, "The expansion agent").
    agent: join(dist, 'client/src/cli/agent.js'),
    'agent-client': join(dist, 'client/src/cli/agent-client.js'),
    // Makes the Jinja renderer's startup snapshot, run by dm in the background.
    'snapshot-builder': join(dist, 'client/src/expand/sandbox/snapshot-builder.js'),
  },
  outdir: join(building, 'cli'),
  format: 'esm',
  splitting: true,
  // CommonJS dependencies bundled into ES modules call require() for node's own modules, and
  // may name __filename (write-file-atomic salts its temporary names with it).
  banner: {
    js: [
      "import { createRequire as dmCreateRequire } from 'node:module';",
      "import { fileURLToPath as dmFileURLToPath } from 'node:url';",
      'const require = dmCreateRequire(import.meta.url);',
      'const __filename = dmFileURLToPath(import.meta.url);',
    ].join(' '),
  },
});
writeFileSync(join(building, '.built-from'), '');
const old = join(dist, `bundle.old-${process.pid}`);
if (existsSync(out)) renameSync(out, old);
renameSync(building, out);
rmSync(old, { recursive: true, force: true });
