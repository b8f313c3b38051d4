/**
 * OCI pulls from dm-registry's /v2/ against the CNCF distribution server (docs/oci.md), measured as
 * a user meets them, side by side in one run:
 *   1. pulling 50 versions of a template (manifest, config and layer each, verified) with dm's OCI
 *      client, from a real dm-registry process and from Debian's docker-registry holding the very
 *      same artifacts (copied from dm-registry), cold (dm-registry's first build of each artifact)
 *      and warm; requests and time, and the ratio dm-registry / docker-registry;
 *   2. dm-registry's manifest serving rate (autocannon, 10 connections) against its own resolve
 *      endpoint for the same version.
 * Rounds alternate between the two servers and medians are printed with the load average, since
 * the machine is shared. Usage: node dist/bench/oci.js [rounds, default 5]
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { MAX_CONFIG_BYTES, MAX_LAYER_BYTES, parseTemplateManifest } from '../client/src/oci/artifact.js';
import { OciClient } from '../client/src/oci/distribution.js';
import { startOciRegistry } from '../test/support/oci-registry.js';
import { startRegistry } from '../test/support/registry-server.js';

const VERSIONS = 50;
const rounds = Number(process.argv[2] ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function makeRegistry(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-bench-oci-'));
  await writeFile(join(dir, 'registry.yaml'), 'name: github.com/acme/bench\n');
  for (let i = 0; i < VERSIONS; i++) {
    const v = join(dir, 'app', `v1.0.${i}`);
    await mkdir(join(v, 'helpers'), { recursive: true });
    await writeFile(
      join(v, 'app.jinja'),
      `{% import 'helpers/labels.jinja' as l %}\nresources:\n- name: {{ env['name'] }}\n  type: ConfigMap\n  properties:\n    data: {v: "${i}"}\n${'# padding line of a realistic template\n'.repeat(60)}`,
    );
    await writeFile(
      join(v, 'app.jinja.schema'),
      `info:\n  title: app ${i}\nproperties:\n  replicas: {type: integer, default: 1}\n`,
    );
    await writeFile(join(v, 'helpers', 'labels.jinja'), `{% macro labels(n) %}app: {{ n }}{% endmacro %}\n`);
    await writeFile(join(v, 'example.yaml'), 'resources:\n- name: a\n  type: app.jinja\n');
  }
  return dir;
}

interface PullRun {
  ms: number;
  requests: number;
}

async function pullAll(
  client: OciClient,
  repository: string,
  tags: readonly string[],
  counter: { n: number },
): Promise<PullRun> {
  const before = counter.n;
  const start = performance.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < tags.length; i = next++) {
      const { bytes } = await client.getManifest(repository, tags[i]!);
      const m = parseTemplateManifest(bytes, tags[i]!);
      await client.getBlob(repository, m.config.digest, MAX_CONFIG_BYTES);
      await client.getBlob(repository, m.layer.digest, MAX_LAYER_BYTES);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { ms: performance.now() - start, requests: counter.n - before };
}

async function rate(url: string): Promise<number> {
  const result = await autocannon({ url, connections: 10, duration: 3 });
  return result.requests.average;
}

async function main(): Promise<void> {
  const dir = await makeRegistry();
  const server = await startRegistry([`${dir}=github.com/acme/bench`]);
  const docker = await startOciRegistry();
  try {
    const dmHost = new URL(server.url).host;
    const counters = { dm: { n: 0 }, docker: { n: 0 } };
    const fresh = (host: string, counter: { n: number }) =>
      new OciClient({ host, plainHttp: true, onRequest: () => counter.n++ });
    const dmRepo = 'dm/github.com/acme/bench/app';
    const tags = (await fresh(dmHost, { n: 0 }).listTags(dmRepo)).sort();
    if (tags.length !== VERSIONS)
      throw new Error(`dm-registry lists ${tags.length} tags, expected ${VERSIONS}`);

    // Cold: dm-registry builds each artifact on first request.
    const cold = await pullAll(fresh(dmHost, counters.dm), dmRepo, tags, counters.dm);

    // The same artifacts into docker-registry, copied byte for byte.
    const source = fresh(dmHost, { n: 0 });
    const target = fresh(docker.host, { n: 0 });
    const dockerRepo = 'acme/bench/app';
    for (const tag of tags) {
      const { bytes } = await source.getManifest(dmRepo, tag);
      const m = parseTemplateManifest(bytes, tag);
      await target.putBlob(
        dockerRepo,
        m.config.digest,
        await source.getBlob(dmRepo, m.config.digest, MAX_CONFIG_BYTES),
      );
      await target.putBlob(
        dockerRepo,
        m.layer.digest,
        await source.getBlob(dmRepo, m.layer.digest, MAX_LAYER_BYTES),
      );
      await target.putManifest(dockerRepo, tag, bytes);
    }

    const dmRuns: PullRun[] = [];
    const dockerRuns: PullRun[] = [];
    for (let r = 0; r < rounds; r++) {
      dmRuns.push(await pullAll(fresh(dmHost, counters.dm), dmRepo, tags, counters.dm));
      dockerRuns.push(await pullAll(fresh(docker.host, counters.docker), dockerRepo, tags, counters.docker));
    }
    const dmMs = median(dmRuns.map((r) => r.ms));
    const dockerMs = median(dockerRuns.map((r) => r.ms));
    console.log(
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}; ${rounds} alternating rounds, medians`,
    );
    console.log(`pull ${VERSIONS} versions (manifest+config+layer, 8 at a time, verified):`);
    console.log(`  dm-registry cold (first builds)  ${cold.ms.toFixed(0)} ms, ${cold.requests} requests`);
    console.log(`  dm-registry warm                 ${dmMs.toFixed(0)} ms, ${dmRuns[0]!.requests} requests`);
    console.log(
      `  docker-registry                  ${dockerMs.toFixed(0)} ms, ${dockerRuns[0]!.requests} requests`,
    );
    console.log(`  ratio dm-registry / docker-registry (warm): ${(dmMs / dockerMs).toFixed(2)}`);

    const manifestUrl = `${server.url}/v2/${dmRepo}/manifests/v1.0.7`;
    const resolveUrl = `${server.url}/api/v1/resolve?ref=${encodeURIComponent('github.com/acme/bench/app:=v1.0.7')}`;
    const manifestRates: number[] = [];
    const resolveRates: number[] = [];
    for (let r = 0; r < Math.min(rounds, 3); r++) {
      manifestRates.push(await rate(manifestUrl));
      resolveRates.push(await rate(resolveUrl));
    }
    const mr = median(manifestRates);
    const rr = median(resolveRates);
    console.log(
      `dm-registry serving (10 connections, 3 s runs): manifests ${mr.toFixed(0)} req/s, resolve ${rr.toFixed(0)} req/s, ratio ${(mr / rr).toFixed(2)}`,
    );
  } finally {
    docker.stop();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
