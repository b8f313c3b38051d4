/**
 * Conventions people type without thinking (kubectl, helm, npm), through the real `dm`: `-` is
 * standard input; listings print a header row and aligned columns; `-q` quiets deploy; a mistyped
 * subcommand gets "did you mean"; `dm config list`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DeployHarness, deployHarness } from '../deploy/harness.js';
import { startRegistry } from '../support/registry-server.js';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

/** Columns of a table line: cells separated by two or more spaces. */
function columnStarts(line: string): number[] {
  const starts = [0];
  for (const m of line.matchAll(/ {2,}(?=\S)/g)) starts.push(m.index + m[0].length);
  return starts;
}

/** A header row in capitals, then rows whose cells start where the header's do. */
function assertTable(text: string, header: string[]): void {
  const lines = text.trimEnd().split('\n');
  assert.deepEqual(lines[0]!.split(/ {2,}/), header, text);
  const starts = columnStarts(lines[0]!);
  for (const line of lines.slice(1)) {
    for (const s of starts.slice(1)) {
      assert.equal(line[s - 1], ' ', `column at ${s} aligned in:\n${text}`);
      assert.notEqual(line[s], ' ', `column at ${s} aligned in:\n${text}`);
    }
  }
}

describe('- reads standard input', () => {
  it('expand, template render, merge and render read `-`; imports resolve against the current directory', async () => {
    const env = await isolatedEnv();
    const dir = await mkdtemp(join(tmpdir(), 'dm-stdin-'));
    await writeFile(join(dir, 'cm.jinja'), 'resources:\n- name: {{ env.name }}-cm\n  type: v1/ConfigMap\n');
    const config = 'imports:\n- path: cm.jinja\nresources:\n- name: app\n  type: cm.jinja\n';
    const expand = await runDm(['expand', '-', '-o', 'json'], { env, cwd: dir, input: config });
    assert.equal(expand.code, 0, expand.stderr);
    const layout = JSON.parse(expand.stdout) as { config: { resources: { name: string }[] } };
    assert.deepEqual(
      layout.config.resources.map((r) => r.name),
      ['app-cm'],
    );

    const render = await runDm(['template', 'render', '-', '--properties', 'a=5'], {
      env,
      cwd: dir,
      input: 'x={{ properties.a }}\n',
    });
    assert.equal(render.code, 0, render.stderr);
    assert.equal(render.stdout.trim(), 'x=5');

    await writeFile(join(dir, 'b.yaml'), 'b: 2\n');
    const merge = await runDm(['merge', '--as', 'values', '-', 'b.yaml'], { env, cwd: dir, input: 'a: 1\n' });
    assert.equal(merge.code, 0, merge.stderr);
    assert.deepEqual(merge.stdout.trim().split('\n').sort(), ['a: 1', 'b: 2']);

    const layered = await runDm(['render', '-'], {
      env,
      cwd: dir,
      input:
        'schema: deckhand/LayeringPolicy/v1\nmetadata: {schema: metadata/Control/v1, name: layering}\ndata: {layerOrder: [global]}\n---\nschema: example/Kind/v1\nmetadata: {schema: metadata/Document/v1, name: doc, layeringDefinition: {abstract: false, layer: global}}\ndata: {a: 1}\n',
    });
    assert.equal(layered.code, 0, layered.stderr);
    assert.match(layered.stdout, /name: doc/);
  });
});

describe('subcommands', () => {
  it('dm deployments lst and dm types lst suggest list (exit 2); dm config list is dm config view', async () => {
    const env = await isolatedEnv();
    for (const group of ['deployments', 'types']) {
      const r = await runDm([group, 'lst'], { env });
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(`unknown command 'lst' for 'dm ${group}'\\n\\(Did you mean list\\?\\)`),
      );
    }
    const list = await runDm(['config', 'list', '-o', 'json'], { env });
    assert.equal(list.code, 0, list.stderr);
    assert.equal((JSON.parse(list.stdout) as { output: string }).output, 'json');
  });
});

describe('listings and -q against the kube stand-in', () => {
  let h: DeployHarness;
  before(async () => {
    h = await deployHarness();
  });
  after(() => h.close());

  it('deploy -q prints nothing; deployments list, manifests, types list, types instances print tables', async () => {
    const config = h.file(
      'tables.yaml',
      'resources:\n- {name: table-a, type: v1/ConfigMap, properties: {data: {k: v}}}\n- {name: table-service-b, type: v1/ConfigMap}\n',
    );
    const deploy = await h.dm(['deploy', config, '--name', 'tables', '-q']);
    assert.equal(deploy.code, 0, deploy.stderr);
    assert.equal(deploy.stdout, '');
    assert.equal(deploy.stderr, '');

    const stdin = await h.dm(['deploy', '-', '--name', 'from-stdin'], {
      input: 'resources:\n- {name: stdin-cm, type: v1/ConfigMap}\n',
    });
    assert.equal(stdin.code, 0, stdin.stderr);
    assert.match(stdin.stdout, /deployment from-stdin: manifest \S+ applied/);

    const list = await h.dm(['deployments', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assertTable(list.stdout, ['NAME', 'STATE', 'MANIFEST', 'UPDATED']);
    assert.match(list.stdout, /^tables {2,}/m);

    const manifests = await h.dm(['manifests', 'tables']);
    assert.equal(manifests.code, 0, manifests.stderr);
    assertTable(manifests.stdout, ['MANIFEST', 'ACTION', 'STATUS', 'CREATED']);

    const types = await h.dm(['types', 'list']);
    assert.equal(types.code, 0, types.stderr);
    assertTable(types.stdout, ['TYPE', 'INSTANCES']);
    assert.match(types.stdout, /^v1\/ConfigMap {2,}3$/m);

    const instances = await h.dm(['types', 'instances', 'all']);
    assert.equal(instances.code, 0, instances.stderr);
    assertTable(instances.stdout, ['NAME', 'TYPE', 'DEPLOYMENT', 'MANIFEST', 'PATH']);
    assert.equal(instances.stdout.trimEnd().split('\n').length, 4, instances.stdout);
  });

  it('a deployment name with a typo: every command that names one says did you mean, and changes nothing', async () => {
    const config = h.file('typo.yaml', 'resources:\n- {name: typo-cm, type: v1/ConfigMap}\n');
    const deployed = await h.dm(['deploy', config, '--name', 'storefront']);
    assert.equal(deployed.code, 0, deployed.stderr);
    for (const args of [
      ['history', 'storefrnt'],
      ['manifests', 'storefrnt'],
      ['drift', 'storefrnt'],
      ['rollback', 'storefrnt'],
      ['deployments', 'get', 'storefrnt'],
      ['deployments', 'delete', 'storefrnt'],
      ['diff', config, '--name', 'storefrnt'],
    ]) {
      const r = await h.dm(args);
      assert.equal(r.code, 3, `dm ${args.join(' ')}: ${r.stderr}`);
      assert.equal(
        r.stderr,
        "error: deployment 'storefrnt' does not exist\nhint: did you mean storefront?\n",
        `dm ${args.join(' ')}`,
      );
    }
    const far = await h.dm(['diff', config, '--name', 'zzz']);
    assert.match(
      far.stderr,
      /^hint: dm deploy <config> --name zzz --dry-run shows what a new deployment would create$/m,
    );
    const history = await h.dm(['history', 'storefront', '-o', 'json']);
    assert.equal(history.code, 0, history.stderr);
    assert.equal((JSON.parse(history.stdout) as unknown[]).length, 1, 'nothing was deployed or deleted');
  });
});

describe('dm search pages', () => {
  it('--page past the last hit says how many hits there are and how many pages', async () => {
    const registry = await startRegistry([
      `${join(repoRoot, 'registry-fixtures')}=github.com/dm-samples/templates`,
    ]);
    try {
      const env = await isolatedEnv();
      const first = await runDm(['search', 'redis', '--registry-url', registry.url, '-o', 'json'], { env });
      assert.equal(first.code, 0, first.stderr);
      const total = (JSON.parse(first.stdout) as { total: number }).total;
      assert.ok(total > 0, first.stdout);
      const past = await runDm(
        ['search', 'redis', '--registry-url', registry.url, '--page', '50', '--limit', '2'],
        {
          env,
        },
      );
      assert.equal(past.code, 0, past.stderr);
      assert.equal(
        past.stdout,
        `page 50 is past the last hit: ${total} ${total === 1 ? 'template matches' : 'templates match'} 'redis' (${Math.ceil(total / 2)} page${Math.ceil(total / 2) === 1 ? '' : 's'} of 2)\n`,
      );
    } finally {
      await registry.stop();
    }
  });
});
