/**
 * The dm-registry container image (Containerfile; docs/packaging.md, "The container image"), built
 * with Debian's buildah and run from it: no image registry is reachable from the test machines, so
 * the `FROM` image, debian:bookworm-slim, is made here from Debian packages (mmdebstrap's minbase
 * rootfs, cached under ~/.cache/dm-ci/), imported with `buildah from scratch` and tagged with that
 * name; then scripts/build-image.sh builds the image from a package packed from a copy of this
 * checkout (`buildah bud --pull=never`, chroot isolation, vfs storage under ~/.cache/dm-ci/), and the
 * image's entrypoint serves on loopback: /readyz, a search, a resolve, and the image's HEALTHCHECK
 * command run inside the container. The image's size is printed.
 *
 * buildah and mmdebstrap come from scripts/install-system-deps.sh, and both need root here. Where
 * they cannot run, the test says so loudly and is reported as skipped, never as passed.
 */
import assert from 'node:assert/strict';
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { copyCheckout } from '../support/checkout-copy.js';
import { startRegistry } from '../support/registry-server.js';
import { repoRoot } from '../support/run-cli.js';
import { assertServesSample, sampleRegistry } from './sample.js';

/** A limit for a cold run on a loaded 2-core machine (rootfs, Node, native build, apt in the build). */
const LIMIT_MS = 45 * 60_000;
const BASE = 'debian:bookworm-slim';
const SUITE = 'bookworm';
const TAG = `localhost/dm-registry:test-${process.pid}`;

const cache = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'dm-ci');

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd?: string): string {
  const result: SpawnSyncReturns<string> = spawnSync(command, args, {
    env,
    cwd,
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
  assert.equal(
    result.status,
    0,
    `${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stdout}\n${result.stderr}`,
  );
  return result.stdout;
}

/** Why the image cannot be built here, or undefined when it can. */
function cannotRun(): string | undefined {
  for (const tool of ['buildah', 'mmdebstrap']) {
    if (spawnSync('bash', ['-c', `command -v ${tool}`]).status !== 0) {
      return `${tool} is not installed (scripts/install-system-deps.sh installs it)`;
    }
  }
  if (process.getuid?.() !== 0) return 'buildah with chroot isolation and mmdebstrap need root here';
  return undefined;
}

describe('the dm-registry container image', { timeout: LIMIT_MS }, () => {
  const work = mkdtempSync(join(tmpdir(), 'dm-image-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  const reason = cannotRun();
  if (reason) console.error(`\n*** IMAGE TEST NOT RUN (not passed): ${reason} ***\n`);

  it('builds from the Containerfile with buildah and serves /readyz, search and resolve from its entrypoint', {
    timeout: LIMIT_MS,
    skip: reason ? `NOT RUN: ${reason}` : false,
  }, async () => {
    const started = Date.now();
    // buildah's storage: vfs under the cache (kept between runs: the base image), its run state here.
    const storage = join(work, 'storage.conf');
    writeFileSync(
      storage,
      `[storage]\ndriver = "vfs"\ngraphroot = "${join(cache, 'buildah-storage')}"\nrunroot = "${join(work, 'runroot')}"\n`,
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CONTAINERS_STORAGE_CONF: storage,
      BUILDAH_ISOLATION: 'chroot',
      STORAGE_DRIVER: 'vfs',
    };
    const buildah = (...args: string[]) => run('buildah', args, env);

    // The base image, made once from Debian packages and kept in the cache.
    const present = buildah('images', '--format', '{{.Name}}:{{.Tag}}');
    if (!present.split('\n').includes(`docker.io/library/${BASE}`)) {
      const rootfs = join(cache, `debian-${SUITE}-minbase.tar`);
      if (!existsSync(rootfs)) {
        mkdirSync(cache, { recursive: true });
        run('mmdebstrap', ['--variant=minbase', '--mode=root', '--quiet', SUITE, `${rootfs}.tmp`], env);
        renameSync(`${rootfs}.tmp`, rootfs);
      }
      const container = buildah('from', 'scratch').trim();
      try {
        const mount = buildah('mount', container).trim();
        run('tar', ['-xf', rootfs, '-C', mount], env);
        buildah('umount', container);
        buildah(
          'config',
          '--cmd',
          'bash',
          '--env',
          'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
          container,
        );
        buildah('commit', '--quiet', container, `docker.io/library/${BASE}`);
      } finally {
        buildah('rm', container);
      }
    }
    console.log(`image: base ready after ${Math.round((Date.now() - started) / 1000)} s`);

    // The package, packed from a copy of this checkout, and the image built from it.
    const src = join(work, 'src');
    copyCheckout(src);
    const pack = spawnSync('npm', ['pack', '--silent'], {
      cwd: src,
      encoding: 'utf8',
      env: { ...process.env },
    });
    assert.equal(pack.status, 0, pack.stderr);
    const tarball = join(src, readdirSync(src).find((f) => f.endsWith('.tgz')) ?? 'no-package.tgz');
    run('bash', [join(repoRoot, 'scripts', 'build-image.sh'), '--package', tarball, '--tag', TAG], env, work);
    console.log(`image: built after ${Math.round((Date.now() - started) / 1000)} s`);

    const inspected = JSON.parse(buildah('inspect', '--type', 'image', TAG)) as {
      Docker: {
        config: {
          Entrypoint: string[];
          Cmd: string[];
          User: string;
          Volumes: Record<string, unknown>;
          Labels: Record<string, string>;
          Healthcheck?: { Test: string[] };
        };
      };
      OCIv1: { config: { Entrypoint: string[]; Cmd: string[] } };
    };
    const config = inspected.Docker.config;
    assert.deepEqual(config.Entrypoint, ['dm-registry']);
    assert.deepEqual(config.Cmd, ['start']);
    assert.equal(config.User, 'dm-registry');
    assert.deepEqual(Object.keys(config.Volumes ?? {}), ['/var/lib/dm-registry']);
    assert.equal(config.Labels['org.opencontainers.image.licenses'], 'Apache-2.0');
    assert.equal(config.Labels['org.opencontainers.image.version'], '0.1.0');
    assert.ok(config.Labels['org.opencontainers.image.source']);
    assert.equal(config.Healthcheck?.Test[0], 'CMD');
    const size = buildah('images', '--format', '{{.Size}}', TAG).trim();
    console.log(`image: ${TAG}, ${size}`);

    // Served by its entrypoint, indexing a registry mounted into the container.
    const templates = sampleRegistry(join(work, 'templates'));
    const container = buildah('from', '--pull=never', TAG).trim();
    try {
      const inContainer = [
        'buildah',
        'run',
        '--isolation',
        'chroot',
        '-v',
        `${templates}:/templates:ro`,
        container,
        '--',
      ];
      const server = await startRegistry(
        ['/templates'],
        { CONTAINERS_STORAGE_CONF: storage, STORAGE_DRIVER: 'vfs' },
        // The image's own database, in its volume (the last --db wins over the test's temporary one).
        ['--db', 'file:/var/lib/dm-registry/registry.db'],
        { cwd: work, program: [...inContainer, ...config.Entrypoint] },
      );
      try {
        await assertServesSample(server.url);
        // The HEALTHCHECK command, run in the container beside the server, on the image's port
        // setting: here the one the server picked.
        const port = new URL(server.url).port;
        const health = config.Healthcheck?.Test.slice(1) ?? [];
        run(
          'buildah',
          ['run', '--isolation', 'chroot', '--env', `DM_REGISTRY_PORT=${port}`, container, '--', ...health],
          env,
        );
        // What the image holds: python3 with PyYAML, git, Node, as the unprivileged user.
        const tools = run(
          'buildah',
          [
            'run',
            '--isolation',
            'chroot',
            container,
            '--',
            'sh',
            '-c',
            'python3 -c "import yaml; print(yaml.__version__)" && git --version && node --version && id -un',
          ],
          env,
        );
        assert.match(tools, /^\d+\.\d+.*\ngit version .*\nv24\.\d+\.\d+\ndm-registry\n$/);
      } finally {
        await server.stop();
      }
    } finally {
      buildah('rm', container);
      // The image is built again by the next run: only the base stays in the cache.
      buildah('rmi', TAG);
      buildah('rmi', '--prune');
    }
    console.log(`image: test took ${Math.round((Date.now() - started) / 1000)} s`);
  });
});
