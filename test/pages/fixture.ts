/**
 * The pages' test set-up: the real app on a database dialect (a temporary SQLite file, or a new
 * database of the test process's PostgreSQL cluster: testServerOn(), test/server/helpers.ts) with
 * registry-fixtures/ indexed as github.com/dm-samples/templates, plus a small public registry (a
 * second collection and registry for the facets, a description with markup, a lint warning) and a
 * private one.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type Dialect,
  type DialectTestServer,
  FIXTURES,
  type TestServer,
  tempDir,
  testServerOn,
} from '../server/helpers.js';

export const SAMPLES = 'github.com/dm-samples/templates';
export const EXTRAS = 'github.com/acme/extras';
export const PRIVATE = 'github.com/acme/private';
export const EVIL_DESCRIPTION = '<script>alert("owned")</script> & <b>bold</b>';

/** A README with Markdown, raw HTML and hostile links (the redis-sentinel version has it). */
export const README = [
  '# Redis Sentinel',
  '',
  'Runs **three** sentinels; see [the docs](https://redis.io/docs/management/sentinel/).',
  '',
  '- watches `mymaster`',
  '- fails over *automatically*',
  '',
  '<img src=x onerror="alert(1)"> [click](javascript:alert(2)) <a href="javascript:alert(3)">a</a>',
  '',
  '```yaml',
  'quorum: 2',
  '<script>alert(4)</script>',
  '```',
  '',
].join('\n');

function write(root: string, path: string, content: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), content);
}

function extrasRegistry(): string {
  const root = tempDir('dm-pages-extras-');
  write(root, 'registry.yaml', `name: ${EXTRAS}\n`);
  const schema = (title: string, description: string) =>
    `info:\n  title: ${JSON.stringify(title)}\n  description: ${JSON.stringify(description)}\nproperties:\n  replicas:\n    type: integer\n    default: 3\nrequired: [replicas]\n`;
  const jinja = 'resources:\n- name: {{ env["name"] }}\n  type: v1/ConfigMap\n';
  write(root, 'caching/redis-sentinel/v1.0/redis-sentinel.jinja', jinja);
  write(
    root,
    'caching/redis-sentinel/v1.0/redis-sentinel.jinja.schema',
    schema('Redis Sentinel', 'High availability for redis.'),
  );
  write(
    root,
    'caching/redis-sentinel/v1.0/example.yaml',
    'resources:\n- name: s\n  type: redis-sentinel.jinja\n',
  );
  write(root, 'caching/redis-sentinel/v1.0/README.md', README);
  // No example.yaml: a MISSING_EXAMPLE warning for this template.
  write(root, 'caching/markup/v1/markup.jinja', jinja);
  write(root, 'caching/markup/v1/markup.jinja.schema', schema('Markup <i>title</i>', EVIL_DESCRIPTION));
  return root;
}

function privateRegistry(): string {
  const root = tempDir('dm-pages-private-');
  write(root, 'registry.yaml', `name: ${PRIVATE}\n`);
  // Names a public template: the public page's "used by" must not show it to anonymous readers.
  write(root, 'hidden-redis/v1/hidden-redis.jinja', `{# wraps ${SAMPLES}/redis:v1.1 #}\nresources: []\n`);
  write(root, 'hidden-redis/v1/hidden-redis.jinja.schema', 'info:\n  title: Hidden redis\nproperties: {}\n');
  write(root, 'hidden-redis/v1/example.yaml', 'resources: []\n');
  return root;
}

/** A registry whose names are as long as names may be (the phone tests, docs/pages.md "Phones"). */
export const LONG =
  'github.com/an-organisation-with-a-rather-long-name/registry-of-templates-with-long-names';
export const LONG_COLLECTION = 'observability-and-monitoring-stack';
export const LONG_TEMPLATE = 'prometheus-node-exporter-with-extra-collectors-for-hardware';
/** The versions of LONG_TEMPLATE, newest first (as the versions table lists them). */
export const LONG_VERSIONS = ['v10.20.30-alpha.beta.gamma.1', 'v1.1.0', 'v1.0.0'];
/** A version at the files bound (docs/registry-layout.md `VERSION_TOO_MANY_FILES`): `LONG/bulk`. */
export const BULK_FILES = 1000;
/** A template whose file, property and title carry a right-to-left override (U+202E): `LONG/bidi`. */
export const RLO = '\u202e';
/** `LONG/many` has this many versions (v1.0.0 …), and LONG this many more templates (`t0` …). */
export const MANY = 150;
export const EXTRA_TEMPLATES = 101;

/**
 * LONG's tree: the long-named template in three versions (a long property name, default and file
 * path, Markdown in descriptions), `bulk/v1.0.0` with BULK_FILES files in ten directories, and
 * `bidi/v1` with RLO in a file name, a property name and the title; `many` in MANY versions and
 * EXTRA_TEMPLATES more templates, for the lists a page pages.
 */
export function longRegistry(): string {
  const root = tempDir('dm-pages-long-');
  write(root, 'registry.yaml', `name: ${LONG}\n`);
  const jinja = 'resources:\n- name: {{ env["name"] }}\n  type: v1/ConfigMap\n';
  const dir = `${LONG_COLLECTION}/${LONG_TEMPLATE}`;
  for (const v of LONG_VERSIONS) {
    write(root, `${dir}/${v}/${LONG_TEMPLATE}.jinja`, jinja);
    write(
      root,
      `${dir}/${v}/${LONG_TEMPLATE}.jinja.schema`,
      [
        'info:',
        '  title: Node exporter',
        '  description: Exports `node_*` metrics; see **the collectors** list.',
        'properties:',
        '  collectorsEnabledByDefaultOnEveryNodeOfTheCluster:',
        '    type: array',
        '    items: {type: string}',
        '    description: Which collectors run, as `--collector.<name>` flags.',
        '  textfileDirectory:',
        '    type: string',
        '    default: /var/lib/node-exporter/textfile-collector/a-rather-long-directory-name',
        'required: [textfileDirectory]',
        '',
      ].join('\n'),
    );
    write(root, `${dir}/${v}/example.yaml`, `resources:\n- name: e\n  type: ${LONG_TEMPLATE}.jinja\n`);
    write(
      root,
      `${dir}/${v}/dashboards/node-exporter-full-dashboard-with-every-panel-the-collectors-feed.json`,
      '{}\n',
    );
  }
  write(root, 'bulk/v1.0.0/bulk.jinja', jinja);
  write(root, 'bulk/v1.0.0/example.yaml', 'resources:\n- name: b\n  type: bulk.jinja\n');
  for (let i = 0; i < BULK_FILES - 2; i++) write(root, `bulk/v1.0.0/data/d${i % 10}/f${i}.txt`, `${i}\n`);
  for (let i = 0; i < MANY; i++) {
    write(root, `many/v1.0.${i}/many.jinja`, jinja);
    write(root, `many/v1.0.${i}/example.yaml`, 'resources:\n- name: m\n  type: many.jinja\n');
  }
  for (let i = 0; i < EXTRA_TEMPLATES; i++) {
    write(root, `t${i}/v1/t${i}.jinja`, jinja);
    write(root, `t${i}/v1/example.yaml`, `resources:\n- name: t\n  type: t${i}.jinja\n`);
  }
  write(root, 'bidi/v1/bidi.jinja', jinja);
  write(
    root,
    'bidi/v1/bidi.jinja.schema',
    `info:\n  title: ${JSON.stringify(`evil${RLO}txt.exe`)}\nproperties:\n  ${JSON.stringify(`port${RLO}x`)}:\n    type: string\n`,
  );
  write(root, 'bidi/v1/example.yaml', 'resources:\n- name: b\n  type: bidi.jinja\n');
  write(root, `bidi/v1/notes/read${RLO}me.txt`, 'x\n');
  return root;
}

/**
 * The pages' server on `dialect` (testServerOn()); typed with its SQLite store on SQLite, which
 * store-dialects.test.ts reads directly beside a PostgreSQL copy. `long` adds LONG (longRegistry()).
 */
export async function pagesServer(dialect: 'sqlite', options?: { long?: boolean }): Promise<TestServer>;
export async function pagesServer(dialect: Dialect, options?: { long?: boolean }): Promise<DialectTestServer>;
export async function pagesServer(
  dialect: Dialect,
  options: { long?: boolean } = {},
): Promise<DialectTestServer> {
  const s = await testServerOn(dialect, { defaultRegistry: SAMPLES });
  const sources: [string, string, 'public' | 'private'][] = [
    [FIXTURES, SAMPLES, 'public'],
    [extrasRegistry(), EXTRAS, 'public'],
    [privateRegistry(), PRIVATE, 'private'],
  ];
  if (options.long) sources.push([longRegistry(), LONG, 'public']);
  for (const [source, name, visibility] of sources) {
    const row = await s.service.add({ source, name, visibility });
    const outcome = await s.service.sync(row.id, 'manual');
    assert.equal(outcome.status, 'succeeded', `indexing ${name}: ${outcome.error?.message ?? ''}`);
  }
  return s;
}
