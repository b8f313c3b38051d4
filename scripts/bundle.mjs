#!/usr/bin/env node
// Bundles what `dm` runs (docs/client.md, "The CLI bundle"), from the compiled modules in
// dist/ (run after `tsc`; `npm run build` runs both):
//   dist/bundle/cli/        the `dm` CLI: main.js and prestart.js (bin/dm.js loads them), the
//                           modules commands load lazily in chunks beside them;
//   dist/bundle/renderers/  each rendering process as one file: jinja-child.cjs (templates of
//                           `dm expand`), blueprint-child.cjs (blueprint executions); a renderer
//                           may read only its own file.
// Loading a few files instead of some 200 modules is most of `dm expand`'s start-up. The registry
// server and the tests use the compiled modules themselves.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');
const out = join(dist, 'bundle');

// Native addons and drivers stay in node_modules: loaded from there when a command needs them.
const external = ['better-sqlite3', 'pg', 'pg-native'];

rmSync(out, { recursive: true, force: true });
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
await build({
  ...common,
  entryPoints: {
    main: join(dist, 'client/src/cli/main.js'),
    prestart: join(dist, 'client/src/cli/prestart.js'),
  },
  outdir: join(out, 'cli'),
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
await build({
  ...common,
  entryPoints: {
    'jinja-child': join(dist, 'client/src/expand/sandbox/jinja-child.js'),
    'blueprint-child': join(dist, 'client/src/blueprint/sandbox-child.js'),
  },
  outdir: join(out, 'renderers'),
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  // A renderer reads nothing but its own file: no external module may remain.
  external: [],
});
