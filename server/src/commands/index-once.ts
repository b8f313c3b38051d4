/** `dm-registry index <source>`: index one source once and print the findings (docs/server.md). */

import type { Command } from 'commander';
import { printable } from '../../../client/src/registry/content-names.js';
import { ADMIN_ACCESS } from '../api/access.js';
import { commitShown } from '../source/directory.js';
import { ensureIndexed, openEverything } from './open-everything.js';
import { type CommonOptions, DATA_DIR_HELP, databaseTarget } from './target.js';

async function indexOnce(
  source: string,
  options: CommonOptions & { json?: boolean },
  env: NodeJS.ProcessEnv,
) {
  const { server, githubHosts, logger, database } = await openEverything(
    databaseTarget(options.db, env, options.dataDir),
    env,
    {
      accessLog: false,
    },
  );
  try {
    const [entry] = await ensureIndexed(server, [source], githubHosts);
    const outcome = await server.service.sync(entry!.id, 'cli');
    const row = await server.service.find(entry!.id, ADMIN_ACCESS);
    const info = await server.service.info(row, { findings: true, viewer: ADMIN_ACCESS });
    logger.flush();
    // A directory has no commit: its fingerprint is the store's alone, shown as '' as in every
    // answer (docs/server.md "HTTP API"), and the text says what was read, not that fingerprint.
    const sync = { ...outcome, commit: commitShown(outcome.commit) };
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ sync, registry: info }, null, 2)}\n`);
    } else {
      const counts = `${info.counts.templates} templates, ${info.counts.versions} versions`;
      const lines = [
        info.source.type === 'directory'
          ? `${info.name}: ${outcome.status}; indexed ${counts} from directory ${info.source.location}`
          : `${info.name}: ${outcome.status} at ${outcome.commit ?? '-'}; ${counts}; ${outcome.apiRequests} source requests`,
        // Names from the tree are escaped (docs/registry-layout.md, "Paths and names").
        ...(info.findings ?? []).map(
          (f) => `${f.severity} ${f.code} ${printable(f.path)}: ${printable(f.message)}`,
        ),
        ...(outcome.error ? [`error ${outcome.error.code}: ${outcome.error.message}`] : []),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    if (outcome.status === 'failed') process.exitCode = 1;
  } finally {
    await server.service.stop();
    await database.close();
  }
}

export function registerIndex(program: Command, env: NodeJS.ProcessEnv): void {
  program
    .command('index <source>')
    .description('index one source once and print the findings')
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  dm-registry index registry-fixtures\n  dm-registry index github.com/acme/templates@main --db file:./data/registry.db --json\n',
    )
    .action((source, o) => indexOnce(source, o, env));
}
