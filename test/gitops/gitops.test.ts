/**
 * dm inside GitOps tools (docs/gitops.md), driven as each contract drives it: the Argo CD plugin's
 * init and generate commands from examples/argocd/plugin.yaml, in the application directory, with
 * the repo server's environment; `dm fn` with a ResourceList on stdin. Outputs are read back with
 * PyYAML (the reference reader) as well as dm's.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { parseYaml, parseYamlDocuments } from '../../client/src/document/yaml.js';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

/** Documents as PyYAML reads them (JSON), or an assertion failure. */
function pyyaml(text: string): unknown[] {
  const r = spawnSync(
    'python3',
    ['-c', 'import sys,yaml,json; print(json.dumps(list(yaml.safe_load_all(sys.stdin))))'],
    {
      input: text,
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

interface KubeDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
  [field: string]: unknown;
}

interface ResourceListDoc {
  apiVersion: string;
  kind: string;
  items: KubeDoc[];
  functionConfig: { data: Record<string, string> };
  results?: { severity: string; message: string; file?: { path: string } }[];
}

/** Only Kubernetes objects: each with apiVersion, kind and metadata.name, nothing else at the top. */
function assertOnlyObjects(stdout: string): KubeDoc[] {
  const docs = pyyaml(stdout) as KubeDoc[];
  assert.deepEqual(docs, parseYamlDocuments(stdout));
  assert.ok(docs.length > 0, 'objects printed');
  for (const d of docs) {
    assert.equal(typeof d.apiVersion, 'string', JSON.stringify(d));
    assert.match(d.kind, /^[A-Z][A-Za-z0-9]*$/);
    assert.equal(typeof d.metadata?.name, 'string');
    assert.ok(!('layout' in d) && !('resources' in d) && !('config' in d));
  }
  return docs;
}

const CONFIG = `resources:
- name: site
  type: web.jinja
  properties:
    replicas: 2
    maxMemory: 64mb
- name: cache
  type: github.com/acme/templates/redis:v1.0
- name: shared
  type: v1/Namespace
`;

const WEB = `resources:
- name: {{ env.deployment }}-svc
  type: v1/Service
  properties:
    spec:
      ports:
      - port: 80
- name: {{ env.deployment }}-settings
  type: ConfigMap
  properties:
    metadata:
      namespace: pinned
    data:
      replicas: "{{ properties.replicas }}"
      maxMemory: "{{ properties.maxMemory }}"
      tier: "{{ properties.tier | default('none') }}"
`;

async function makeRegistry(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-gitops-reg-'));
  await writeFile(join(dir, 'registry.yaml'), 'name: github.com/acme/templates\n');
  await mkdir(join(dir, 'redis', 'v1.0.2'), { recursive: true });
  await writeFile(
    join(dir, 'redis', 'v1.0.2', 'redis.jinja'),
    'resources:\n- name: {{ env.name }}-redis\n  type: apps/v1/Deployment\n  properties:\n    spec: {replicas: 1}\n',
  );
  await writeFile(
    join(dir, 'redis', 'v1.0.2', 'example.yaml'),
    'resources:\n- name: r\n  type: redis.jinja\n',
  );
  return dir;
}

/** An application directory as Argo CD checks it out: config.yaml, a local template, dm.lock. */
async function makeApp(env: Record<string, string>, registry: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-gitops-app-'));
  await writeFile(join(dir, 'config.yaml'), CONFIG);
  await writeFile(join(dir, 'web.jinja'), WEB);
  const install = await runDm(['install', '--registry-dir', registry], { env, cwd: dir });
  assert.equal(install.code, 0, install.stderr);
  return dir;
}

interface PluginCommand {
  command: string[];
  args?: string[];
}

/** Runs one of plugin.yaml's commands as the repo server does: in the app directory, with its env. */
function runPluginCommand(c: PluginCommand, cwd: string, env: Record<string, string>) {
  const argv = [...c.command, ...(c.args ?? [])];
  assert.equal(argv[0], 'dm', 'the plugin runs dm');
  return runDm(argv.slice(1), { cwd, env });
}

describe('dm as an Argo CD config management plugin (examples/argocd/plugin.yaml)', () => {
  let plugin: { spec: { init: PluginCommand; generate: PluginCommand } } & Record<string, unknown>;
  let home: Record<string, string>;
  let app: string;
  before(async () => {
    plugin = parseYaml(
      await readFile(join(repoRoot, 'examples/argocd/plugin.yaml'), 'utf8'),
    ) as typeof plugin;
    assert.equal(plugin.apiVersion, 'argoproj.io/v1alpha1');
    assert.equal(plugin.kind, 'ConfigManagementPlugin');
    home = await isolatedEnv();
    const registry = await makeRegistry();
    app = await makeApp(home, registry);
    // Argo's repo server has no registry: generate must work from dm.lock and the cache alone.
    await rm(registry, { recursive: true, force: true });
  });

  const argo = (extra: Record<string, string>) => ({
    ...home,
    ARGOCD_APP_NAME: 'shop',
    ARGOCD_APP_NAMESPACE: 'prod',
    ARGOCD_APP_SOURCE_PATH: '.',
    ...extra,
  });

  it('init then generate print only objects, deterministic, with parameters, name and namespace', async () => {
    const env = argo({
      ARGOCD_APP_PARAMETERS: JSON.stringify([
        { name: 'replicas', string: '5' },
        { name: 'properties', map: { maxMemory: '1g', tier: 'gold' } },
      ]),
      PARAM_REPLICAS: '5',
      PARAM_PROPERTIES_MAXMEMORY: '1g',
      PARAM_PROPERTIES_TIER: 'gold',
    });
    const init = await runPluginCommand(plugin.spec.init, app, env);
    assert.equal(init.code, 0, init.stderr);
    const first = await runPluginCommand(plugin.spec.generate, app, env);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stderr, '');
    const second = await runPluginCommand(plugin.spec.generate, app, env);
    assert.equal(second.stdout, first.stdout, 'same bytes on two runs');
    const docs = assertOnlyObjects(first.stdout);
    assert.deepEqual(
      docs.map((d) => `${d.kind} ${d.metadata.namespace ?? '-'}/${d.metadata.name}`),
      [
        'Service prod/shop-svc',
        'ConfigMap pinned/shop-settings',
        'Deployment prod/cache-redis',
        'Namespace -/shared',
      ],
    );
    assert.deepEqual(docs[1]!.data, { replicas: '5', maxMemory: '1g', tier: 'gold' });
    assert.equal(docs[2]!.apiVersion, 'apps/v1');
  });

  it('PARAM_* alone set the same properties (names matched to the configuration)', async () => {
    const r = await runPluginCommand(
      plugin.spec.generate,
      app,
      argo({ PARAM_REPLICAS: '7', PARAM_MAXMEMORY: '2g', PARAM_TIER: 'silver' }),
    );
    assert.equal(r.code, 0, r.stderr);
    const docs = assertOnlyObjects(r.stdout);
    assert.deepEqual(docs[1]!.data, { replicas: '7', maxMemory: '2g', tier: 'silver' });
  });

  it('without parameters the configuration stands; namespace defaults to the kubeconfig default', async () => {
    const r = await runDm(['argocd', 'generate', 'config.yaml'], { cwd: app, env: { ...home } });
    assert.equal(r.code, 0, r.stderr);
    const docs = assertOnlyObjects(r.stdout);
    assert.deepEqual(docs[1]!.data, { replicas: '2', maxMemory: '64mb', tier: 'none' });
    assert.equal(docs[0]!.metadata.namespace, 'default');
  });

  it('a $(ref) that needs the live cluster is an error naming it: nothing on stdout', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dm-gitops-ref-'));
    await writeFile(
      join(dir, 'config.yaml'),
      'resources:\n- name: db\n  type: v1/Service\n- name: app\n  type: v1/ConfigMap\n  properties:\n    data:\n      host: $(ref.db.spec.clusterIP)\n',
    );
    const r = await runPluginCommand(plugin.spec.generate, dir, argo({}));
    assert.notEqual(r.code, 0);
    assert.equal(r.stdout, '');
    assert.match(
      r.stderr,
      /^error: resource 'app': \$\(ref\.db\.spec\.clusterIP\) at data\.host needs the live object 'db'/,
    );
    assert.doesNotMatch(r.stderr, /at .*\.js/);
  });

  it('malformed ARGOCD_APP_PARAMETERS: one sentence on stderr, nothing on stdout', async () => {
    for (const bad of ['{"name":"x"}', '[{"name":"x","string":3}]', '[{"string":"3"}]', 'not json']) {
      const r = await runPluginCommand(plugin.spec.generate, app, argo({ ARGOCD_APP_PARAMETERS: bad }));
      assert.equal(r.code, 1, `${bad}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^error: ARGOCD_APP_PARAMETERS: /);
    }
  });
});

/** A ResourceList as kustomize and kpt write it on a function's stdin. */
function resourceList(functionConfig: unknown, items: unknown[] = []): string {
  return JSON.stringify({
    apiVersion: 'config.kubernetes.io/v1',
    kind: 'ResourceList',
    items,
    functionConfig,
  });
}

function assertResourceList(stdout: string): ResourceListDoc {
  const docs = pyyaml(stdout);
  assert.equal(docs.length, 1);
  const list = docs[0] as ResourceListDoc;
  assert.equal(list.apiVersion, 'config.kubernetes.io/v1');
  assert.equal(list.kind, 'ResourceList');
  assert.ok(Array.isArray(list.items));
  return list;
}

describe('dm fn: a KRM function', () => {
  let home: Record<string, string>;
  let app: string;
  before(async () => {
    home = await isolatedEnv();
    const registry = await makeRegistry();
    app = await makeApp(home, registry);
    await rm(registry, { recursive: true, force: true });
  });
  const existing = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept', namespace: 'x' } };

  it('a ConfigMap functionConfig naming a file: objects appended to items, same bytes twice', async () => {
    const input = resourceList(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'shop',
          annotations: { 'config.kubernetes.io/function': 'exec:\n  path: ./dm-fn.sh\n' },
        },
        data: { path: 'config.yaml', namespace: 'kns', replicas: '4' },
      },
      [existing],
    );
    const first = await runDm(['fn'], { cwd: app, env: home, input });
    assert.equal(first.code, 0, first.stderr);
    const second = await runDm(['fn'], { cwd: app, env: home, input });
    assert.equal(second.stdout, first.stdout);
    const list = assertResourceList(first.stdout);
    assert.equal(list.results, undefined);
    assert.deepEqual(list.items[0], existing);
    assert.deepEqual(
      list.items.slice(1).map((d) => `${d.kind} ${d.metadata.namespace ?? '-'}/${d.metadata.name}`),
      [
        'Service kns/shop-svc',
        'ConfigMap pinned/shop-settings',
        'Deployment kns/cache-redis',
        'Namespace -/shared',
      ],
    );
    assert.equal(list.items[2]!.data?.replicas, '4');
    assert.equal(list.functionConfig.data.path, 'config.yaml');
  });

  it('a functionConfig holding the configuration inline, with properties', async () => {
    const earlier = { message: 'from an earlier function', severity: 'info' };
    const input = JSON.stringify({
      ...JSON.parse(
        resourceList({
          apiVersion: 'dm.io/v1',
          kind: 'DmConfiguration',
          metadata: { name: 'inline' },
          spec: {
            properties: { maxMemory: '8g' },
            configuration: { resources: [{ name: 'site', type: 'web.jinja', properties: { replicas: 1 } }] },
          },
        }),
      ),
      results: [earlier],
    });
    const r = await runDm(['fn'], { cwd: app, env: home, input });
    assert.equal(r.code, 0, r.stderr);
    const list = assertResourceList(r.stdout);
    assert.deepEqual(
      list.items.map((d) => d.metadata.name),
      ['inline-svc', 'inline-settings'],
    );
    assert.deepEqual(list.items[1]!.data, { replicas: '1', maxMemory: '8g', tier: 'none' });
    assert.deepEqual(list.results, [earlier], 'results of earlier functions stay');
  });

  it('errors: a valid ResourceList with results (severity error, message, file), exit 1, items kept', async () => {
    const cases: { input: string; message: RegExp; file?: string }[] = [
      {
        input: resourceList(
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { path: 'missing.yaml' } },
          [existing],
        ),
        message: /'missing\.yaml'/,
        file: 'missing.yaml',
      },
      {
        input: resourceList(
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { replicas: '1' } },
          [existing],
        ),
        message: /either path .* or configuration/,
      },
      {
        input: resourceList({
          apiVersion: 'dm.io/v1',
          kind: 'DmConfiguration',
          metadata: { name: 'x', annotations: { 'config.kubernetes.io/path': 'fn/dm.yaml' } },
          spec: {
            configuration:
              'resources:\n- {name: db, type: v1/Service}\n- {name: a, type: v1/ConfigMap, properties: {data: {h: "$(ref.db.spec.clusterIP)"}}}\n',
          },
        }),
        message: /\$\(ref\.db\.spec\.clusterIP\) at data\.h needs the live object 'db'/,
        file: 'fn/dm.yaml',
      },
      {
        input: 'apiVersion: v1\nkind: List\nitems: []\n',
        message: /not a config\.kubernetes\.io\/v1 ResourceList/,
      },
      { input: 'items: [', message: /standard input/ },
    ];
    for (const c of cases) {
      const r = await runDm(['fn'], { cwd: app, env: home, input: c.input });
      assert.equal(r.code, 1, `${c.input}: ${r.stderr}`);
      const list = assertResourceList(r.stdout);
      assert.equal(list.results?.length, 1);
      const result = list.results![0]!;
      assert.equal(result.severity, 'error');
      assert.match(result.message, c.message);
      assert.deepEqual(result.file, c.file === undefined ? undefined : { path: c.file });
      if (c.input.startsWith('{') && c.input.includes('kept')) assert.deepEqual(list.items, [existing]);
      assert.match(r.stderr, /^error: /);
    }
  });
});
