/**
 * The `dm` CLI runs from its bundle (docs/client.md, "The CLI bundle"): `dm expand` and
 * `dm blueprint render` start their rendering processes from `dist/bundle/renderers/`, and such a
 * process may read its own file and nothing else (docs/expansion.md, "Isolation"). Seen from
 * outside: the renderer's command line, read from /proc while a slow template runs.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { descendants, dmBin, isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

const bundle = join(repoRoot, 'dist', 'bundle');

describe('the dm CLI bundle', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dm-cli-bundle-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is made: the CLI, its early start and one file per renderer', () => {
    for (const file of [
      'cli/main.js',
      'cli/prestart.js',
      'renderers/jinja-child.cjs',
      'renderers/blueprint-child.cjs',
    ])
      assert.ok(existsSync(join(bundle, file)), `dist/bundle/${file} is missing`);
  });

  it("loads no version ordering (semver) before a command needs it: not in the CLI's static module graph", () => {
    // What bin/dm.js imports for every command, with everything those import statically.
    const seen = new Set<string>();
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(join(bundle, 'cli', file), 'utf8');
      for (const m of text.matchAll(/^(?:import|export)[^;]*?from "\.\/([^"]+)"|^import "\.\/([^"]+)"/gm))
        walk((m[1] ?? m[2]) as string);
    };
    walk('main.js');
    walk('prestart.js');
    assert.ok(seen.size > 5, `only ${[...seen].join(', ')} found`);
    const withSemver = [...seen].filter((f) =>
      readFileSync(join(bundle, 'cli', f), 'utf8').includes('node_modules/semver/'),
    );
    assert.deepEqual(withSemver, []);
    // It is in the bundle, for the commands that use it, and found by the test above.
    assert.ok(
      readdirSync(join(bundle, 'cli')).some((f) =>
        readFileSync(join(bundle, 'cli', f), 'utf8').includes('node_modules/semver/'),
      ),
    );
  });

  it('dm expand renders with a Jinja process that may read its own bundle file only', async () => {
    // Slow enough to be seen running (10^8 steps: a range may hold 100,000 at most), and finite, so a
    // renderer left behind by the kill below stops by itself.
    writeFileSync(
      join(dir, 'slow.jinja'),
      '{% for i in range(1000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}resources: []\n',
    );
    writeFileSync(
      join(dir, 'config.yaml'),
      'imports:\n- path: slow.jinja\nresources:\n- {name: a, type: slow.jinja}\n',
    );
    const env = { ...process.env, ...(await isolatedEnv()) };
    const dm = spawn(process.execPath, [dmBin, 'expand', 'config.yaml', '--timeout', '120'], {
      cwd: dir,
      env,
      stdio: 'ignore',
    });
    try {
      let renderer: string[] | undefined;
      for (let i = 0; i < 600 && !renderer; i++) {
        // Not a builder of the renderer's startup snapshot (renderer-snapshot.ts).
        renderer = descendants(dm.pid as number).find(
          (args) => args.some((a) => a.endsWith('jinja-child.cjs')) && !args.includes('--build-snapshot'),
        );
        if (!renderer) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(renderer, 'no Jinja rendering process was seen');
      const entry = join(bundle, 'renderers', 'jinja-child.cjs');
      const reads = renderer.filter((a) => a.startsWith('--allow-fs-read='));
      assert.deepEqual(reads, [`--allow-fs-read=${entry}`]);
      assert.ok(renderer.some((a) => /^--(experimental-)?permission$/.test(a)));
      assert.ok(!renderer.some((a) => a.startsWith('--allow-fs-write') || a === '--allow-child-process'));
    } finally {
      dm.kill('SIGKILL');
    }
  });

  it('dm expand through the bundle gives what the compiled modules give', async () => {
    writeFileSync(
      join(dir, 'web.jinja'),
      'resources:\n- name: {{ env.name }}\n  type: Service\n  properties:\n    port: {{ properties.port }}\n    ratio: {{ 1.0 }}\n',
    );
    // Ajv's runtime helpers (format, pattern, enum/uniqueItems equality, string length in code
    // points) run in the renderer, which may read nothing but its own file.
    writeFileSync(
      join(dir, 'web.jinja.schema'),
      [
        'properties:',
        '  port: {type: integer, default: 80}',
        '  host: {type: string, format: hostname, default: example.org}',
        '  zone: {type: string, pattern: "^[a-z]+-[0-9]$", maxLength: 8, default: eu-1}',
        '  word: {type: string, maxLength: 3, default: "héé"}',
        '  tags: {type: array, uniqueItems: true, items: {enum: [[a], [b]]}, default: [[a], [b]]}',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'helper.py'),
      'def GenerateConfig(ctx):\n    return {"resources": [{"name": ctx.env["name"] + "-x", "type": "web.jinja"}]}\n',
    );
    writeFileSync(
      join(dir, 'site.yaml'),
      'imports:\n- path: web.jinja\n- path: helper.py\nresources:\n- {name: s, type: helper.py}\n',
    );
    const cli = await runDm(['expand', 'site.yaml', '-o', 'json'], { cwd: dir, env: await isolatedEnv() });
    assert.equal(cli.code, 0, cli.stderr);
    const { expandConfiguration, RenderSandbox } = await import('../../client/src/expand/index.js');
    const sandbox = new RenderSandbox();
    try {
      const result = await expandConfiguration(
        { content: readFileSync(join(dir, 'site.yaml'), 'utf8'), path: join(dir, 'site.yaml') },
        { sandbox },
      );
      assert.deepEqual(
        JSON.parse(cli.stdout),
        JSON.parse(JSON.stringify({ config: result.config, layout: result.layout })),
      );
    } finally {
      sandbox.close();
    }
  });

  it('dm blueprint render validates schemas in its renderer as the compiled modules do', async () => {
    // Ajv's runtime helpers (format, pattern, enum/uniqueItems equality, string length in code
    // points) run in the blueprint renderer, which may read nothing but its own file.
    const blueprint = [
      'apiVersion: landscaper.gardener.cloud/v1alpha1',
      'kind: Blueprint',
      'imports:',
      '  - {name: host, schema: {type: string, format: hostname}}',
      '  - {name: zone, schema: {type: string, pattern: "^[a-z]+-", maxLength: 4}}',
      '  - {name: tags, schema: {type: array, uniqueItems: true, items: {enum: [[a], [b]]}}}',
      'deployExecutions:',
      '  - {name: d, type: Jinja, template: "deployItems: [{name: d, type: t/mock, config: {zone: \'{{ imports.zone }}\'}}]"}',
      '',
    ].join('\n');
    const { runBlueprintRender } = await import('../../client/src/blueprint/index.js');
    // Four code points (five UTF-16 units) fit maxLength 4; five do not.
    for (const [name, zone, fits] of [
      ['fits', 'eu-\u{1F600}', true],
      ['too-long', 'euw-\u{1F600}', false],
    ] as const) {
      const bp = join(dir, `blueprint-${name}`);
      mkdirSync(bp);
      writeFileSync(join(bp, 'blueprint.yaml'), blueprint);
      const inputs = {
        installation: {
          name: 'inst',
          namespace: 'ns',
          importDataMappings: { host: 'example.org', zone, tags: [['a'], ['b']] },
        },
      };
      writeFileSync(join(dir, `imports-${name}.json`), JSON.stringify(inputs));
      const cli = await runDm(
        ['blueprint', 'render', bp, '--imports', join(dir, `imports-${name}.json`), '-o', 'json'],
        { env: await isolatedEnv() },
      );
      const library = await runBlueprintRender({ 'blueprint.yaml': blueprint }, inputs);
      if (fits) {
        assert.equal(library.error, undefined, library.error?.message);
        assert.equal(cli.code, 0, cli.stderr);
        assert.deepEqual(
          JSON.parse(cli.stdout),
          JSON.parse(JSON.stringify({ installations: library.installations })),
        );
      } else {
        assert.equal(cli.code, 4, cli.stderr);
        const { error } = JSON.parse(cli.stdout) as { error: { code: string; message: string } };
        assert.deepEqual([error.code, error.message], [library.error?.phase, library.error?.message]);
        assert.equal(error.message, 'inst: import zone: (root): must NOT have more than 4 characters');
      }
    }
  });
});
