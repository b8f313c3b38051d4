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

/**
 * The pages' server on `dialect` (testServerOn()); typed with its SQLite store on SQLite, which
 * store-dialects.test.ts reads directly beside a PostgreSQL copy.
 */
export async function pagesServer(dialect: 'sqlite'): Promise<TestServer>;
export async function pagesServer(dialect: Dialect): Promise<DialectTestServer>;
export async function pagesServer(dialect: Dialect): Promise<DialectTestServer> {
  const s = await testServerOn(dialect, { defaultRegistry: SAMPLES });
  const sources: [string, string, 'public' | 'private'][] = [
    [FIXTURES, SAMPLES, 'public'],
    [extrasRegistry(), EXTRAS, 'public'],
    [privateRegistry(), PRIVATE, 'private'],
  ];
  for (const [source, name, visibility] of sources) {
    const row = await s.service.add({ source, name, visibility });
    const outcome = await s.service.sync(row.id, 'manual');
    assert.equal(outcome.status, 'succeeded', `indexing ${name}: ${outcome.error?.message ?? ''}`);
  }
  return s;
}
