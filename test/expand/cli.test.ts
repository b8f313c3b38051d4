/** `dm expand` and `dm template render` end to end, through the real binary. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { findOracle } from '../support/python-oracle.js';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

function fixture(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'dm-expand-cli-'));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return dir;
}

const RS =
  'resources:\n- name: {{ env.name }}-rc\n  type: RC\n  properties: {replicas: {{ properties.replicas }}, d: {{ env.deployment }}, x: {{ env.extra }}}\n';

describe('dm expand', () => {
  it('dm expand prints {config, layout} as JSON, values files and --properties over config properties', async () => {
    const dir = fixture({
      'config.yaml': 'resources:\n- {name: rs, type: rs.jinja, properties: {replicas: 1}}\n',
      'rs.jinja': RS,
      'values.yaml': 'replicas: 2\n',
    });
    const env = await isolatedEnv();
    const base = [
      'expand',
      join(dir, 'config.yaml'),
      '--deployment',
      'prod',
      '--env',
      'extra=7',
      '-o',
      'json',
    ];
    const fromValues = await runDm([...base, '-f', join(dir, 'values.yaml')], { env });
    assert.equal(fromValues.code, 0, fromValues.stderr);
    const out = JSON.parse(fromValues.stdout) as {
      config: { resources: { properties: unknown }[] };
      layout: unknown;
    };
    assert.deepEqual(out.config.resources[0]?.properties, { replicas: 2, d: 'prod', x: 7 });
    const fromFlag = await runDm([...base, '-f', join(dir, 'values.yaml'), '--properties', 'replicas=3'], {
      env,
    });
    assert.equal(JSON.parse(fromFlag.stdout).config.resources[0].properties.replicas, 3);
  });

  it('dm expand prints integral floats and integer-like keys as DM (PyYAML) did', async () => {
    const dir = fixture({
      'config.yaml':
        'resources:\n- name: f\n  type: f.jinja\n  properties: {ratio: 1.0, m: {b: 1, "10": 2, "2": 3}}\n',
      'f.jinja':
        'resources:\n- name: cm\n  type: ConfigMap\n  properties:\n    r: {{ properties.ratio }}\n    s: "{{ properties.ratio }}"\n    keys: "{% for k in properties.m %}{{ k }},{% endfor %}"\n',
    });
    const result = await runDm(['expand', join(dir, 'config.yaml'), '-o', 'yaml'], {
      env: await isolatedEnv(),
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /\n +r: 1\.0\n/);
    assert.match(result.stdout, /\n +s: '1\.0'\n/);
    assert.match(result.stdout, /keys: b,10,2,\n/);
  });

  it('dm expand warns about a type that is a reference but for the v of its version (kept a primitive)', async () => {
    const dir = fixture({
      'config.yaml': 'resources:\n- {name: cache, type: "github.com/acme/t/redis:1.0"}\n',
    });
    const r = await runDm(['expand', 'config.yaml', '-o', 'json'], { env: await isolatedEnv(), cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).config.resources, [
      { name: 'cache', type: 'github.com/acme/t/redis:1.0' },
    ]);
    assert.equal(
      r.stderr,
      "warning: config.yaml: type 'github.com/acme/t/redis:1.0' of 'cache' looks like a template reference, but its version lacks the 'v' (github.com/acme/t/redis:v1.0?); treated as a primitive\n",
    );
  });

  it('dm expand warns about a resource key DM does not read (propeties:), and expands as DM did', async () => {
    const dir = fixture({
      'config.yaml':
        'resources:\n- name: rs\n  type: rs.jinja\n  propeties: {replicas: 3}\n  metadata: {dependsOn: []}\n',
      'rs.jinja': RS,
    });
    const r = await runDm(['expand', 'config.yaml', '-o', 'json'], { env: await isolatedEnv(), cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stderr,
      "warning: config.yaml: unknown key 'propeties' in resource 'rs' (did you mean 'properties'?); ignored (a resource has name, type, properties, metadata, accessControl)\n",
    );
    assert.equal(JSON.parse(r.stdout).config.resources[0].properties.replicas, null);
  });

  it('dm expand of a template file expands it as a one-resource configuration', async () => {
    const dir = fixture({ 'rs.jinja': RS });
    const result = await runDm(
      ['expand', join(dir, 'rs.jinja'), '--properties', 'replicas=4', '-o', 'json'],
      {
        env: await isolatedEnv(),
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const out = JSON.parse(result.stdout);
    assert.equal(out.config.resources[0].name, 'rs-rc');
    assert.equal(out.config.resources[0].properties.replicas, 4);
  });

  it('dm expand reports a schema failure with exit code 4 and a blocked template with a clear error', async () => {
    const dir = fixture({
      'config.yaml':
        'resources:\n- {name: a, type: s.jinja, properties: {replicas: x}}\n- {name: b, type: evil.jinja}\n',
      's.jinja': RS,
      's.jinja.schema': 'properties:\n  replicas: {type: integer}\n',
      'evil.jinja': "{{ range.constructor('return process')() }}",
    });
    const env = await isolatedEnv();
    const bad = await runDm(['expand', join(dir, 'config.yaml')], { env });
    assert.equal(bad.code, 4);
    assert.match(bad.stderr, /properties\.replicas: must be integer \(got "x"\)/);
    writeFileSync(join(dir, 'config.yaml'), 'resources:\n- {name: b, type: evil.jinja}\n');
    const blocked = await runDm(['expand', join(dir, 'config.yaml'), '-o', 'json'], { env });
    assert.equal(blocked.code, 1);
    assert.equal(JSON.parse(blocked.stdout).error.code, 'TEMPLATE_BLOCKED');
    assert.match(blocked.stderr, /blocked/);
  });
});

describe('dm expand with registry references', () => {
  it('dm expand resolves a reference argument and reference types through --registry-dir', async () => {
    const env = await isolatedEnv();
    const direct = await runDm(
      ['expand', 'redis:v1.0', '--registry-dir', 'registry-fixtures', '-o', 'json'],
      { env },
    );
    assert.equal(direct.code, 0, direct.stderr);
    const out = JSON.parse(direct.stdout) as {
      config: { resources: { name: string }[] };
      layout: { resources: { type: string }[] };
    };
    assert.ok(out.config.resources.some((r) => r.name === 'redis'));
    assert.equal(out.layout.resources[0]?.type, 'redis:v1.0');
    const dir = fixture({
      'config.yaml': 'resources:\n- {name: cache, type: "redis:v1.0"}\n- {name: cm, type: ConfigMap}\n',
    });
    const inConfig = await runDm(
      ['expand', join(dir, 'config.yaml'), '--registry-dir', 'registry-fixtures', '-o', 'json'],
      {
        env,
      },
    );
    assert.equal(inConfig.code, 0, inConfig.stderr);
    const names = (JSON.parse(inConfig.stdout).config.resources as { name: string }[]).map((r) => r.name);
    assert.ok(names.includes('cache') && names.includes('cm'), names.join(','));
  });

  it('dm expand warns about a --properties key the template does not declare, naming the nearest one', async () => {
    const env = await isolatedEnv();
    const typo = await runDm(
      [
        'expand',
        'redis:v1.0',
        '--registry-dir',
        'registry-fixtures',
        '--properties',
        'maxMemori=64mb',
        '-o',
        'json',
      ],
      { env },
    );
    assert.equal(typo.code, 0, typo.stderr);
    assert.match(
      typo.stderr,
      /property 'maxMemori' given for redis \(redis:v1\.0\) is not in its schema; did you mean 'maxMemory'\?/,
    );
    const known = await runDm(
      [
        'expand',
        'redis:v1.0',
        '--registry-dir',
        'registry-fixtures',
        '--properties',
        'maxMemory=64mb',
        '-o',
        'json',
      ],
      { env },
    );
    assert.equal(known.code, 0, known.stderr);
    assert.doesNotMatch(known.stderr, /is not in its schema/);
  });
});

describe('dm template render', () => {
  it('dm template render prints the raw text, without a final newline, globals from --context', async () => {
    const dir = fixture({
      't.jinja': "{% include 'part.jinja' %}:{{ properties.a }}:{{ env.k }}\n",
      'part.jinja': 'part',
      'ctx.yaml': 'properties: {a: 1}\nenv: {k: from-context}\n',
    });
    const env = await isolatedEnv();
    const result = await runDm(
      ['template', 'render', join(dir, 't.jinja'), '--context', join(dir, 'ctx.yaml'), '--env', 'k=v'],
      {
        env,
      },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'part:1:v');
    const json = await runDm(
      ['template', 'render', join(dir, 't.jinja'), '--context', join(dir, 'ctx.yaml'), '-o', 'json'],
      {
        env,
      },
    );
    assert.equal(JSON.parse(json.stdout).text, 'part:1:from-context');
  });

  it('dm template render reads --context as DM templates see data: 1.0 stays a float, keys keep their order (same text as Jinja2)', async () => {
    const python = findOracle();
    assert.ok(python, 'python3 with jinja2 and yaml is needed (scripts/install-system-deps.sh)');
    const dir = fixture({
      't.jinja':
        '{{ properties.x }} {{ properties.y }} {% for k in properties.m %}{{ k }},{% endfor %}{{ properties.m }}\n',
      'ctx.yaml': "properties: {x: 1.0, y: 2.50, m: {b: 1, '10': 2, '2': 3}}\n",
    });
    const result = await runDm(
      ['template', 'render', join(dir, 't.jinja'), '--context', join(dir, 'ctx.yaml')],
      {
        env: await isolatedEnv(),
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const reference = spawnSync(
      python,
      [
        '-c',
        'import sys, jinja2, yaml\nctx = yaml.safe_load(open(sys.argv[2]))\nsys.stdout.write(jinja2.Environment().from_string(open(sys.argv[1]).read()).render(**ctx))',
        join(dir, 't.jinja'),
        join(dir, 'ctx.yaml'),
      ],
      { encoding: 'utf8' },
    );
    assert.equal(reference.status, 0, reference.stderr);
    assert.equal(result.stdout, reference.stdout);
    assert.equal(result.stdout, "1.0 2.5 b,10,2,{'b': 1, '10': 2, '2': 3}");
  });

  it('dm template render runs a Python template and prints its YAML', async () => {
    const dir = fixture({
      'g.py':
        "def GenerateConfig(context):\n    return {'resources': [{'name': context.env['name'], 'type': 'T'}]}\n",
    });
    const result = await runDm(['template', 'render', join(dir, 'g.py'), '--env', 'name=n1'], {
      env: await isolatedEnv(),
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'resources:\n  - name: n1\n    type: T\n');
  });
});

describe('dm expand with ../ imports (test/expand/parent-imports)', () => {
  const copy = () => {
    const dir = mkdtempSync(join(tmpdir(), 'dm-parent-imports-'));
    cpSync(join(repoRoot, 'test/expand/parent-imports'), dir, { recursive: true });
    return dir;
  };
  const elsewhere = mkdtempSync(join(tmpdir(), 'dm-cwd-'));

  it('accepts ../ imports inside the project root (the current directory), keyed by the path as written', async () => {
    const dir = copy();
    const env = await isolatedEnv();
    const run = await runDm(['expand', 'deployments/web/config.yaml', '-o', 'json'], { cwd: dir, env });
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout) as {
      config: { resources: { name: string; properties: Record<string, unknown> }[] };
      layout: { resources: { name: string; type: string }[] };
    };
    assert.deepEqual(
      out.config.resources.map((r) => r.name),
      ['web-vm', 'net-net'],
    );
    assert.deepEqual(out.config.resources[0]?.properties.metadata, {
      items: [{ key: 'startup-script', value: '#!/bin/sh\necho starting\n' }],
    });
    assert.equal(out.layout.resources[1]?.type, '../../common/jinja/net.jinja');
  });

  it('refuses them when nothing marks a project root above the configuration, and accepts them under a .git', async () => {
    const dir = copy();
    const env = await isolatedEnv();
    const config = join(dir, 'deployments/web/config.yaml');
    const refused = await runDm(['expand', config], { cwd: elsewhere, env });
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stderr,
      /import '\.\.\/\.\.\/common\/python\/container_vm\.py' leads outside the project root/,
    );
    const git = spawnSync('git', ['init', '-q', dir], { encoding: 'utf8' });
    assert.equal(git.status, 0, git.stderr);
    const accepted = await runDm(['expand', config, '-o', 'json'], { cwd: elsewhere, env });
    assert.equal(accepted.code, 0, accepted.stderr);
  });

  it("accepts them run from the configuration's own directory when a .git above encloses both (the nearest root that does)", async () => {
    const dir = copy();
    const env = await isolatedEnv();
    const here = join(dir, 'deployments/web');
    const refused = await runDm(['expand', 'config.yaml'], { cwd: here, env });
    assert.notEqual(refused.code, 0, 'without a .git the current directory is the only root');
    assert.match(refused.stderr, /leads outside the project root/);
    const git = spawnSync('git', ['init', '-q', dir], { encoding: 'utf8' });
    assert.equal(git.status, 0, git.stderr);
    const accepted = await runDm(['expand', 'config.yaml', '-o', 'json'], { cwd: here, env });
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.equal(
      (JSON.parse(accepted.stdout) as { layout: { resources: { type: string }[] } }).layout.resources[1]
        ?.type,
      '../../common/jinja/net.jinja',
    );
  });

  it('refuses an import that climbs above the project root, and an absolute import', async () => {
    const dir = copy();
    const env = await isolatedEnv();
    const climbing = await runDm(['expand', 'deployments/escape/config.yaml'], { cwd: dir, env });
    assert.notEqual(climbing.code, 0);
    assert.match(climbing.stderr, /import '\.\.\/\.\.\/\.\.\/outside\.py' leads outside the project root/);
    writeFileSync(
      join(dir, 'abs.yaml'),
      `imports:\n- path: ${join(dir, 'common/startup.sh')}\nresources: []\n`,
    );
    const absolute = await runDm(['expand', 'abs.yaml'], { cwd: dir, env });
    assert.notEqual(absolute.code, 0);
    assert.match(absolute.stderr, /must be a relative path, not an absolute one/);
  });
});

describe('dm expand --schema-validation', () => {
  it('strict by default with a hint naming warn; warn by flag or config key prints each violation and expands', async () => {
    const dir = fixture({
      'config.yaml': 'resources:\n- {name: r, type: r.jinja, properties: {replicas: three}}\n',
      'r.jinja': 'resources:\n- {name: x, type: T, properties: {replicas: {{ properties.replicas }}}}\n',
      'r.jinja.schema': 'properties:\n  replicas: {type: int}\n',
    });
    const env = await isolatedEnv();
    const config = join(dir, 'config.yaml');
    const strict = await runDm(['expand', config], { env });
    assert.equal(strict.code, 4, strict.stderr);
    assert.match(strict.stderr, /properties\.replicas: must be integer/);
    assert.match(strict.stderr, /--schema-validation warn/);
    const warn = await runDm(['expand', config, '--schema-validation', 'warn', '-o', 'json'], { env });
    assert.equal(warn.code, 0, warn.stderr);
    assert.match(warn.stderr, /warning: r \([^)]*r\.jinja\): properties\.replicas: must be integer/);
    assert.equal(JSON.parse(warn.stdout).config.resources[0].properties.replicas, 'three');
    const bad = await runDm(['expand', config, '--schema-validation', 'loose'], { env });
    assert.equal(bad.code, 2, bad.stderr);
    mkdirSync(join(env.XDG_CONFIG_HOME!, 'dm'), { recursive: true });
    writeFileSync(join(env.XDG_CONFIG_HOME!, 'dm', 'config.yaml'), 'schemaValidation: warn\n');
    const configured = await runDm(['expand', config], { env });
    assert.equal(configured.code, 0, configured.stderr);
    const flagWins = await runDm(['expand', config, '--schema-validation', 'strict'], { env });
    assert.equal(flagWins.code, 4, flagWins.stderr);
  });

  it("strict: a property refused by a schema's top-level additionalProperties warns in the user's own template, fails in a registry's", async () => {
    const template = 'resources:\n- {name: x, type: T, properties: {name: {{ properties.name }}}}\n';
    const schema = 'additionalProperties: false\nproperties:\n  name: {type: string}\n';
    const dir = fixture({
      'own/config.yaml':
        'resources:\n- {name: r, type: tight.jinja, properties: {name: a, dependsOn: [b]}}\n',
      'own/tight.jinja': template,
      'own/tight.jinja.schema': schema,
      'reg/tight/v1/tight.jinja': template,
      'reg/tight/v1/tight.jinja.schema': schema,
      'fromreg/config.yaml':
        'resources:\n- {name: r, type: tight:v1, properties: {name: a, dependsOn: [b]}}\n',
    });
    const env = await isolatedEnv();
    const own = await runDm(['expand', join(dir, 'own', 'config.yaml'), '-o', 'json'], { env });
    assert.equal(own.code, 0, own.stderr);
    assert.match(own.stderr, /warning: r \([^)]*tight\.jinja\): properties\.dependsOn: is not allowed/);
    assert.deepEqual(JSON.parse(own.stdout).config.resources[0].properties, { name: 'a' });
    const registry = await runDm(
      ['expand', join(dir, 'fromreg', 'config.yaml'), '--registry-dir', join(dir, 'reg'), '-o', 'json'],
      { env },
    );
    assert.equal(registry.code, 4, registry.stderr);
    const refused = JSON.parse(registry.stdout).error;
    assert.equal(refused.code, 'SCHEMA_VALIDATION_FAILED');
    assert.match(refused.message, /properties\.dependsOn: is not allowed/);
  });
});
