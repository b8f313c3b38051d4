/**
 * Imports by URL (issue 27; docs/expansion.md "Imports by URL"), through the real `dm` and a local
 * HTTPS stand-in with a throw-away certificate the child trusts through NODE_EXTRA_CA_CERTS. The
 * configuration is a small equivalent of DM's igm-updater sample: the service template's schema
 * imports the load balancer template by URL.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loopbackCertificate } from '../kube-standin/tls.js';
import { findOracle } from '../support/python-oracle.js';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';
import { typed } from './typed-data.js';

const FIXTURE = join(repoRoot, 'test', 'expand', 'url-imports');
const LB = '/samples/igm-updater/python/lb-l3.py';
const fixture = (name: string) => readFileSync(join(FIXTURE, name), 'utf8');

describe('imports by URL (dm expand, dm install)', () => {
  let server: Server;
  let base: string;
  let caFile: string;
  /** What the stand-in serves, path → body (or a redirect), changed by tests. */
  const files = new Map<string, string | { redirect: string } | 'hang'>();
  const seen: string[] = [];
  /** Answers never finished (the time limit's case), ended when the tests end. */
  const hanging: { end: () => void }[] = [];
  before(async () => {
    const cert = loopbackCertificate();
    caFile = join(mkdtempSync(join(tmpdir(), 'dm-url-ca-')), 'ca.pem');
    writeFileSync(caFile, cert.cert);
    server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      seen.push(req.url ?? '');
      const body = files.get(req.url ?? '');
      if (body === undefined) {
        res.writeHead(404).end('not found');
      } else if (body === 'hang') {
        res.writeHead(200, { 'content-type': 'text/plain' }).write('# and nothing more');
        hanging.push(res);
      } else if (typeof body === 'string') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
      } else {
        res.writeHead(302, { location: body.redirect }).end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    for (const res of hanging) res.end();
    return new Promise<void>((r) => server.close(() => r()));
  });

  const serveSample = () => {
    files.set(LB, fixture('lb-l3.py'));
    files.set(`${LB}.schema`, fixture('lb-l3.py.schema'));
    files.set(LB.replace('lb-l3.py', 'lb_naming.py'), fixture('lb_naming.py'));
  };

  /** A project directory with the configuration, the service template, and its schema importing `url`. */
  const project = (url: string): string => {
    const dir = mkdtempSync(join(tmpdir(), 'dm-url-import-'));
    for (const name of ['config.yaml', 'ha-service.py']) cpSync(join(FIXTURE, name), join(dir, name));
    writeFileSync(
      join(dir, 'ha-service.py.schema'),
      fixture('ha-service.py.schema.in').replace('@LB_L3@', url),
    );
    return dir;
  };

  const dm = async (args: string[], cwd: string, env: Record<string, string>) =>
    runDm(args, { cwd, env: { ...env, NODE_EXTRA_CA_CERTS: caFile }, killAfterMs: 240_000 });

  it('renders the igm-updater case as when the file sits beside the configuration', async () => {
    serveSample();
    const env = await isolatedEnv();
    const byUrl = project(`${base}${LB}`);
    const beside = project('lb-l3.py');
    for (const name of ['lb-l3.py', 'lb-l3.py.schema', 'lb_naming.py'])
      cpSync(join(FIXTURE, name), join(beside, name));
    const a = await dm(['expand', 'config.yaml', '-o', 'json'], byUrl, env);
    assert.equal(a.code, 0, a.stderr);
    assert.doesNotMatch(a.stderr, /treated as a primitive/);
    const b = await dm(['expand', 'config.yaml', '-o', 'json'], beside, env);
    assert.equal(b.code, 0, b.stderr);
    const out = JSON.parse(a.stdout);
    assert.deepEqual(out, JSON.parse(b.stdout));
    // The URL's schema applied its default, and the template ran: not a primitive `lb-l3.py`.
    const rule = out.config.resources.find((r: { name: string }) => r.name === 'frontend-lb-fr');
    assert.equal(rule?.properties.IPProtocol, 'TCP');
    assert.ok(!out.config.resources.some((r: { type: string }) => r.type === 'lb-l3.py'));
    assert.ok(seen.includes(LB) && seen.includes(`${LB}.schema`));
    // And the same as DM's rules with Python (test/expand/dm_reference.py) on the files beside.
    const python = findOracle();
    assert.ok(python, 'no python3 with jinja2 and yaml: the reference cannot run');
    const ref = spawnSync(
      python,
      [
        join(repoRoot, 'test/expand/dm_reference.py'),
        join(beside, 'config.yaml'),
        'config',
        '',
        '2026-01-02T03:04:05Z',
      ],
      { encoding: 'utf8' },
    );
    assert.equal(ref.status, 0, ref.stderr);
    assert.deepEqual(typed(out), JSON.parse(ref.stdout));
    assert.ok(
      seen.includes(LB.replace('lb-l3.py', 'lb_naming.py')),
      "the URL schema's import came from beside the URL",
    );
  });

  it('dm install locks the URL by digest; offline then uses the cached bytes; changed bytes fail clearly', async () => {
    serveSample();
    const env = await isolatedEnv();
    const dir = project(`${base}${LB}`);
    const install = await dm(['install'], dir, env);
    assert.equal(install.code, 0, install.stderr);
    const lock = readFileSync(join(dir, 'dm.lock'), 'utf8');
    assert.ok(lock.includes(`${base}${LB}`), lock);
    assert.match(lock, /lb-l3\.py: \{sha256: "?[0-9a-f]{64}"?, size: \d+\}/);
    assert.match(lock, /lb-l3\.py\.schema: \{sha256: /);
    const online = await dm(['expand', 'config.yaml', '-o', 'json'], dir, env);
    assert.equal(online.code, 0, online.stderr);

    // A URL import dm.lock lacks: --frozen-lockfile refuses, and writes nothing.
    const schema = join(dir, 'ha-service.py.schema');
    const locked = readFileSync(schema, 'utf8');
    files.set(`${LB}.v2.py`, fixture('lb-l3.py'));
    writeFileSync(schema, locked.replace(`${LB}\n`, `${LB}.v2.py\n`));
    const outdated = await dm(['install', '--frozen-lockfile'], dir, env);
    assert.equal(outdated.code, 4, outdated.stderr);
    assert.match(outdated.stderr, /LOCKFILE_OUTDATED|dm\.lock/);
    assert.equal(readFileSync(join(dir, 'dm.lock'), 'utf8'), lock, 'dm.lock unchanged');
    writeFileSync(schema, locked);

    // Air-gapped: the stand-in serves nothing; the lock and the cache are enough.
    files.clear();
    const requests = seen.length;
    const offline = await dm(['--offline', 'expand', 'config.yaml', '-o', 'json'], dir, env);
    assert.equal(offline.code, 0, offline.stderr);
    assert.deepEqual(JSON.parse(offline.stdout), JSON.parse(online.stdout));
    assert.equal(seen.length, requests, 'offline made no request');

    // The URL now serves other bytes: a machine without them cached refuses, and says where.
    files.set(LB, `${fixture('lb-l3.py')}\n# changed\n`);
    files.set(`${LB}.schema`, fixture('lb-l3.py.schema'));
    const fresh = await isolatedEnv();
    const changed = await dm(['expand', 'config.yaml', '-o', 'json'], dir, fresh);
    assert.equal(changed.code, 4, changed.stderr);
    const error = JSON.parse(changed.stdout).error;
    assert.equal(error.code, 'DIGEST_MISMATCH');
    assert.match(
      error.message,
      /^ha-service\.py\.schema: import '[^']+lb-l3\.py' \(as 'lb-l3\.py'\): .*does not match its recorded digest/,
    );
    assert.match(error.hint, /^the URL now serves other bytes than dm\.lock recorded/);
    const frozen = await dm(['install', '--frozen-lockfile'], dir, fresh);
    assert.notEqual(frozen.code, 0, frozen.stderr);
    assert.equal(readFileSync(join(dir, 'dm.lock'), 'utf8'), lock, 'dm.lock unchanged');
  });

  it('dm install discovers again when a template file appears where a type was a primitive', async () => {
    serveSample();
    const env = await isolatedEnv();
    const dir = mkdtempSync(join(tmpdir(), 'dm-url-import-'));
    writeFileSync(join(dir, 'config.yaml'), 'resources:\n- name: svc\n  type: svc.jinja\n');
    // svc.jinja is absent: a primitive type, nothing to lock.
    const first = await dm(['install'], dir, env);
    assert.equal(first.code, 0, first.stderr);
    const lock = readFileSync(join(dir, 'dm.lock'), 'utf8');
    assert.ok(!lock.includes(LB), lock);
    // Now it exists, and its schema imports by URL: the lock lacks that URL.
    writeFileSync(
      join(dir, 'svc.jinja'),
      'resources:\n- name: lb\n  type: lb-l3.py\n  properties: {zones: [us-central1-a], port: 80}\n',
    );
    writeFileSync(join(dir, 'svc.jinja.schema'), `imports:\n- path: ${base}${LB}\n  name: lb-l3.py\n`);
    const frozen = await dm(['install', '--frozen-lockfile'], dir, env);
    assert.equal(frozen.code, 4, `${frozen.stdout}${frozen.stderr}`);
    assert.equal(readFileSync(join(dir, 'dm.lock'), 'utf8'), lock, 'dm.lock unchanged');
    const again = await dm(['install'], dir, env);
    assert.equal(again.code, 0, again.stderr);
    assert.ok(readFileSync(join(dir, 'dm.lock'), 'utf8').includes(`${base}${LB}`));
  });

  it('dm deploy --dry-run expands a configuration importing by URL (no cluster needed)', async () => {
    files.set(
      '/cm/cm.jinja',
      'resources:\n- name: {{ env["name"] }}-cm\n  type: v1/ConfigMap\n  properties: {data: {a: b}}\n',
    );
    const dir = mkdtempSync(join(tmpdir(), 'dm-url-import-'));
    writeFileSync(
      join(dir, 'config.yaml'),
      `imports:\n- path: ${base}/cm/cm.jinja\n  name: cm.jinja\nresources:\n- name: settings\n  type: cm.jinja\n`,
    );
    const env = { ...(await isolatedEnv()), KUBECONFIG: join(dir, 'no-such-kubeconfig') };
    const r = await dm(['deploy', 'config.yaml', '--name', 'dry', '--dry-run', '-o', 'json'], dir, env);
    assert.equal(r.code, 0, r.stderr);
    const plan = JSON.parse(r.stdout) as { create: { name: string; kind: string }[] };
    assert.deepEqual(
      plan.create.map((c) => [c.name, c.kind]),
      [['settings-cm', 'ConfigMap']],
    );
  });

  it('offline without a lock: the import is missing, named with its schema', async () => {
    serveSample();
    const env = await isolatedEnv();
    const dir = project(`${base}${LB}`);
    const r = await dm(['--offline', 'expand', 'config.yaml'], dir, env);
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /ha-service\.py\.schema: import '[^']+lb-l3\.py' \(as 'lb-l3\.py'\): .*--offline/);
  });

  it('refuses http, a redirect to http, too many redirects, too big, unreachable — one sentence each', async () => {
    const env = await isolatedEnv();
    files.set('/big.py', `# ${'x'.repeat(5 * 1024 * 1024)}\n`);
    files.set('/to-http.py', { redirect: 'http://example.invalid/lb-l3.py' });
    files.set('/loop.py', { redirect: '/loop.py' });
    files.set('/hang.py', 'hang');
    const cases: [string, number, RegExp, string[]?][] = [
      ['http://example.invalid/lb-l3.py', 1, /is not an https URL: dm fetches templates over https only/],
      [
        `${base}/to-http.py`,
        1,
        /http:\/\/example\.invalid\/lb-l3\.py \(redirected from .*\) is not an https URL/,
      ],
      [`${base}/loop.py`, 5, /redirects more than 5 times/],
      [`${base}/big.py`, 1, /is larger than the 4194304 bytes allowed/],
      [
        'https://127.0.0.1:1/lb-l3.py',
        5,
        /cannot reach https:\/\/127\.0\.0\.1:1\/lb-l3\.py: fetch never connects/,
      ],
      [`${base}/values.txt`, 1, /an import by URL must name a template file \(\.jinja, \.py or \.yaml\)/],
      // A body that never ends is cut off by the HTTP time limit (the server never finishes it).
      [
        `${base}/hang.py`,
        5,
        /cannot reach .*\/hang\.py: no answer within 1 s \(--http-timeout/,
        ['--http-timeout', '1'],
      ],
    ];
    for (const [url, code, message, flags] of cases) {
      const dir = project(url);
      const r = await dm([...(flags ?? []), 'expand', 'config.yaml'], dir, env);
      assert.equal(r.code, code, `${url}: ${r.stderr}`);
      assert.match(r.stderr, message, url);
      assert.match(r.stderr, /ha-service\.py\.schema: import '/, url);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      assert.equal(r.stdout, '');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('content from a registry does not fetch imports by URL: refused, naming the schema', async () => {
    serveSample();
    const env = await isolatedEnv();
    const registry = mkdtempSync(join(tmpdir(), 'dm-url-registry-'));
    mkdirSync(join(registry, 'svc', 'v1'), { recursive: true });
    writeFileSync(join(registry, 'registry.yaml'), 'name: github.com/url-test/templates\n');
    writeFileSync(join(registry, 'svc', 'v1', 'svc.jinja'), 'resources:\n- name: lb\n  type: lb-l3.py\n');
    writeFileSync(
      join(registry, 'svc', 'v1', 'svc.jinja.schema'),
      `imports:\n- path: ${base}${LB}\n  name: lb-l3.py\n`,
    );
    const dir = mkdtempSync(join(tmpdir(), 'dm-url-import-'));
    writeFileSync(
      join(dir, 'config.yaml'),
      'resources:\n- name: a\n  type: github.com/url-test/templates/svc:v1\n',
    );
    const requests = seen.length;
    const r = await dm(['expand', 'config.yaml', '--registry-dir', registry], dir, env);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /svc\.jinja\.schema: import '[^']+lb-l3\.py' is a URL; content from a registry sees only its own files, so dm does not fetch it/,
    );
    assert.equal(seen.length, requests, 'no request made');
  });

  it('a configuration importing more than 100 files by URL is refused at the 101st', async () => {
    const env = await isolatedEnv();
    const dir = mkdtempSync(join(tmpdir(), 'dm-url-import-'));
    const imports = Array.from({ length: 101 }, (_, i) => {
      files.set(`/many/t${i}.jinja`, 'resources: []\n');
      return `- path: ${base}/many/t${i}.jinja\n  name: t${i}.jinja\n`;
    });
    writeFileSync(
      join(dir, 'config.yaml'),
      `imports:\n${imports.join('')}resources:\n- name: a\n  type: t0.jinja\n`,
    );
    const r = await dm(['expand', 'config.yaml'], dir, env);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /config\.yaml: import '.*' \(as 't\d+\.jinja'\): one expansion imports at most 100 files by URL/,
    );
  });
});
