import type { Command } from 'commander';
import type { InstallStep } from '../../resolve/install.js';
import { action, type CommandContext, propertiesOf, warner } from '../context.js';
import { formatTable, printable } from '../format.js';

const DEFAULT_CONFIG = 'config.yaml';

/** A one-line progress bar on stderr, only when it is a terminal and not --quiet. */
function progress(ctx: CommandContext, label: string): ((done: number, total: number) => void) | undefined {
  if (!ctx.interactive || ctx.config.quiet) return undefined;
  const started = Date.now();
  let shown = false;
  return (done, total) => {
    if (!shown && Date.now() - started < 1000) return; // only for work longer than a second
    shown = true;
    const width = 30;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    ctx.streams.stderr(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
    if (done === total) ctx.streams.stderr('\n');
  };
}

/**
 * `-v`: the resolver chain a command resolves through, in its order, from the one builder
 * (client/src/resolve/build-chain.ts); the lock file first when `lock` says the command reads one.
 */
/** `-v`: each step of install or update with what it found and how long it took, on stderr. */
function showSteps(ctx: CommandContext): ((step: InstallStep) => void) | undefined {
  if (!ctx.config.verbose) return undefined;
  return (s) => ctx.streams.stderr(`dm: ${s.name}: ${s.detail} (${Math.round(s.ms)} ms)\n`);
}

async function showChain(ctx: CommandContext, lock: boolean): Promise<void> {
  if (!ctx.config.verbose) return;
  const { buildResolverChain } = await import('../../resolve/build-chain.js');
  const { chain } = await buildResolverChain({
    config: ctx.config,
    registryDirs: ctx.registryDirs,
    cache: lock,
  });
  const names = [...(lock ? ['lock file'] : []), ...chain.map((r) => r.name)];
  ctx.streams.stderr(`dm: resolving through ${names.join(' → ')}\n`);
}

export function registerPackageCommands(program: Command): void {
  program
    .command('pull <ref>')
    .description('fetch a template version into the cache, or into a directory with --to')
    .option('--to <dir>', 'write the version directory here (must not exist)')
    .addHelpText('after', '\nExamples:\n  dm pull redis:v1.0 --registry-dir registry-fixtures --to ./redis\n')
    .action(
      action(async (ctx, [ref], opts) => {
        const { pull } = await import('../../resolve/install.js');
        const result = await pull(ref!, {
          config: ctx.config,
          registryDirs: ctx.registryDirs,
          warn: warner(ctx),
          to: opts.to as string | undefined,
        });
        return printable(result, (r) =>
          ctx.config.quiet
            ? ''
            : `pulled ${r.reference} → ${r.version} (${r.files.length} files)${r.to ? ` into ${r.to}` : ''}`,
        );
      }),
    );

  program
    .command('push <source> <target>')
    .description('publish a template version (a version directory or a reference) to an OCI registry')
    .option('--force', 'replace a tag that already holds other content')
    .option('--no-index', "do not add the version to the namespace's dm-index (what dm search reads)")
    .addHelpText(
      'after',
      `\nThe tag is the version's name; the artifact is described in docs/oci.md. Credentials come from\n$REGISTRY_AUTH_FILE, containers' auth.json or ~/.docker/config.json (podman/docker login).\n\nExamples:\n  dm push registry-fixtures/redis/v1.0.3 oci://ghcr.io/acme/templates/redis\n  dm push redis:v1.0 oci://localhost:5000/acme/templates/redis --registry-dir registry-fixtures --plain-http\n`,
    )
    .action(
      action(async (ctx, [source, target], opts) => {
        const { push } = await import('../../oci/push.js');
        const epoch = process.env.SOURCE_DATE_EPOCH;
        const created =
          epoch && /^\d{1,12}$/.test(epoch)
            ? new Date(Number(epoch) * 1000).toISOString().replace('.000Z', 'Z')
            : undefined;
        const result = await push(source!, target!, {
          config: ctx.config,
          registryDirs: ctx.registryDirs,
          force: opts.force === true,
          noIndex: opts.index === false,
          created,
        });
        return printable(result, (r) =>
          ctx.config.quiet
            ? ''
            : `${r.status === 'unchanged' ? 'unchanged' : r.status === 'replaced' ? 'replaced' : 'pushed'} ${r.reference} (${r.files} files, ${r.digest}) manifest ${r.manifest}`,
        );
      }),
    );

  program
    .command('install [config]')
    .description(`resolve every reference of a configuration, transitively, write dm.lock and fill the cache`)
    .option('--frozen-lockfile', 'fail if dm.lock would change; change nothing')
    .option('--no-expand', 'lock only the references visible without rendering the templates')
    .addHelpText(
      'after',
      `\nThe configuration defaults to ./${DEFAULT_CONFIG}; dm.lock is written beside it. References are found\nwithout rendering (imports, resource types, what templates and schemas name) and by expanding the\nconfiguration (what templates emit), with -f/--values and --properties.\n\nExamples:\n  dm install\n  dm install deploy/config.yaml --frozen-lockfile\n`,
    )
    .action(
      action(async (ctx, [config], opts) => {
        const { install } = await import('../../resolve/install.js');
        await showChain(ctx, true);
        const result = await install(config ?? DEFAULT_CONFIG, {
          config: ctx.config,
          registryDirs: ctx.registryDirs,
          frozenLockfile: Boolean(opts.frozenLockfile),
          expand: opts.expand !== false,
          properties: await propertiesOf(ctx),
          warn: warner(ctx),
          onProgress: progress(ctx, 'fetching'),
          onStep: showSteps(ctx),
        });
        return printable(result, (r) => {
          if (ctx.config.quiet) return ''; // -q: nothing on success, as npm install --silent
          const rows = r.references.map((x) => [x.reference, x.version, x.change]);
          const removed = r.removed.map((x) => `removed ${x}\n`).join('');
          return `${rows.length ? formatTable(['REFERENCE', 'VERSION', 'LOCK'], rows) : 'no references\n'}${removed}${
            r.lockChanged ? `wrote ${r.lockFile}` : `${r.lockFile} is up to date`
          }; ${r.filesFetched} files fetched, ${r.filesCached} already cached`;
        });
      }),
    );

  program
    .command('update [refs...]')
    .addHelpText(
      'after',
      '\nExamples:\n  dm update\n  dm update github.com/dm-samples/templates/redis:v1.0 -c deploy/config.yaml\n',
    )
    .description('float locked references to the newest allowed patch and show what changed')
    .option('-c, --config-file <file>', 'the configuration', DEFAULT_CONFIG)
    .action(
      action(async (ctx, refs, opts) => {
        const { install } = await import('../../resolve/install.js');
        await showChain(ctx, false);
        const result = await install(opts.configFile as string, {
          config: ctx.config,
          registryDirs: ctx.registryDirs,
          update: refs,
          properties: await propertiesOf(ctx),
          warn: warner(ctx),
          onStep: showSteps(ctx),
        });
        return printable(result, (r) => {
          if (ctx.config.quiet) return '';
          const changed = r.references.filter((x) => x.change !== 'unchanged');
          if (changed.length === 0) return 'everything is at the newest allowed version';
          return formatTable(
            ['REFERENCE', 'FROM', 'TO'],
            changed.map((x) => [
              x.reference,
              x.previousVersion ?? '(new)',
              x.previousVersion === x.version ? `${x.version} (content changed)` : x.version,
            ]),
          );
        });
      }),
    );

  program
    .command('outdated')
    .addHelpText('after', '\nExamples:\n  dm outdated\n  dm outdated -c deploy/config.yaml -o json\n')
    .description(
      'list locked references with newer patches, and newer minors/majors that need an explicit change',
    )
    .option('-c, --config-file <file>', 'the configuration', DEFAULT_CONFIG)
    .action(
      action(async (ctx, _args, opts) => {
        const { outdated } = await import('../../resolve/install.js');
        const result = await outdated(opts.configFile as string, {
          config: ctx.config,
          registryDirs: ctx.registryDirs,
        });
        // As npm outdated: exit 1 when something is outdated (after printing the list).
        if (result.length > 0) process.exitCode = 1;
        return printable(result, (list) =>
          list.length === 0
            ? 'all locked references are current'
            : formatTable(
                ['REFERENCE', 'LOCKED', 'WANTED', 'LATEST'],
                list.map((e) => [e.reference, e.locked, e.wanted, e.latest]),
              ),
        );
      }),
    );

  const cache = program.command('cache').description('list, verify and clean the content cache');
  cache
    .command('list')
    .addHelpText('after', '\nExamples:\n  dm cache list\n  dm cache list -o json\n')
    .description('list cached content')
    .action(
      action(async (ctx) => {
        const { ContentCache } = await import('../../fetch/content-cache.js');
        const entries = await new ContentCache({ root: ctx.config.dirs.cache }).list();
        return printable(
          entries.map((e) => ({ digest: e.digest, size: e.size, modified: e.modified.toISOString() })),
          (list) =>
            `${formatTable(
              ['DIGEST', 'SIZE', 'MODIFIED'],
              list.map((e) => [e.digest, String(e.size), e.modified]),
            )}${list.length} entries in ${ctx.config.dirs.cache}`,
        );
      }),
    );
  cache
    .command('verify')
    .addHelpText('after', '\nExamples:\n  dm cache verify\n')
    .description('re-hash every cached file; remove corrupted ones')
    .action(
      action(async (ctx) => {
        const { ContentCache } = await import('../../fetch/content-cache.js');
        const result = await new ContentCache({ root: ctx.config.dirs.cache }).verify();
        return printable(
          result,
          (r) =>
            `${r.checked} entries checked, ${r.corrupted.length} corrupted${r.corrupted.map((d) => `\n  removed ${d}`).join('')}`,
        );
      }),
    );
  cache
    .command('clean')
    .addHelpText('after', '\nExamples:\n  dm cache clean\n  dm cache clean --older-than 30\n')
    .description('remove cached content (all, or older than --older-than days)')
    .option('--older-than <days>', 'only entries not written for this many days')
    .action(
      action(async (ctx, _args, opts) => {
        const { ContentCache } = await import('../../fetch/content-cache.js');
        const days = opts.olderThan === undefined ? undefined : Number(opts.olderThan);
        if (days !== undefined && !(days >= 0)) {
          const { DmError } = await import('../../error.js');
          throw new DmError('INVALID_FLAG', `--older-than '${opts.olderThan}' is not a number of days`, {
            category: 'usage',
          });
        }
        // A date can be at most 8.64e15 ms before 1970: more days than that back is "nothing is
        // that old", never an invalid date that every entry would count as older than.
        const cutoff = days === undefined ? undefined : Math.max(Date.now() - days * 86_400_000, -8.64e15);
        const result = await new ContentCache({ root: ctx.config.dirs.cache }).clean(
          cutoff === undefined ? {} : { olderThan: new Date(cutoff) },
        );
        return printable(result, (r) => `removed ${r.removed} entries (${r.bytes} bytes)`);
      }),
    );
}
