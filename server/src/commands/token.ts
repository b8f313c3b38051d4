/** `dm-registry token create|list|revoke` (docs/server.md "HTTP API"). */

import { join } from 'node:path';
import type { Command } from 'commander';
import { DmError } from '../../../client/src/error.js';
import { parseOrganisationList } from '../store/visibility.js';
import { withService } from './open-everything.js';
import { type CommonOptions, collect, DATA_DIR_HELP, databaseTarget, localDir } from './target.js';

/** `30d`, `12h`, `90m`, `8w`, `45s` → milliseconds. */
function parseDuration(text: string): number {
  const m = /^(\d{1,6})([smhdw])$/.exec(text.trim());
  if (!m || Number(m[1]) === 0) {
    throw new DmError(
      'USAGE',
      `--expires '${text}' must be a positive number with s, m, h, d or w (e.g. 30d)`,
      {
        category: 'usage',
      },
    );
  }
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[2] as 's'];
  return Number(m[1]) * unit;
}

export function registerToken(program: Command, env: NodeJS.ProcessEnv): void {
  const token = program
    .command('token')
    .description('API tokens')
    .addHelpText(
      'after',
      '\nExamples:\n  dm-registry token create --admin\n  dm-registry token create --read github.com/acme/private\n',
    );
  token
    .command('create')
    .description('create an API token (printed once; stored hashed)')
    .option('--admin', 'a token for the write endpoints')
    .option('--read <registry>', 'a token that may read a private registry (host/owner/repo, or * for all)')
    .option('--org <organisations>', "a token that may read its organisations' registries: a,b")
    .option('--expires <duration>', 'refuse the token after this long: 90m, 12h, 30d, 8w')
    .option(
      '--deploy <cluster/namespace>',
      'a token that may change and read deployments there (repeatable)',
      collect,
    )
    .option(
      '--read-deployments <cluster/namespace>',
      'a token that may read deployments there (repeatable)',
      collect,
    )
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .addHelpText(
      'after',
      '\nExamples:\n  dm-registry token create --admin\n  dm-registry token create --read github.com/acme/private --expires 30d --db file:./data/registry.db\n  dm-registry token create --org acme,acme-labs\n  dm-registry token create --deploy prod/web\n',
    )
    .action(
      async (
        o: CommonOptions & {
          admin?: boolean;
          read?: string;
          org?: string;
          expires?: string;
          deploy?: string[];
          readDeployments?: string[];
        },
      ) => {
        if (o.deploy || o.readDeployments) {
          const { createManagerToken } = await import('../manager/manager-tokens.js');
          if (o.admin || o.read || o.org || o.expires || (o.deploy && o.readDeployments)) {
            throw new DmError('USAGE', 'give --deploy or --read-deployments alone', { category: 'usage' });
          }
          const role = o.deploy ? 'deploy' : 'read';
          const dbFile = join(localDir(databaseTarget(o.db, env, o.dataDir)), 'registry.db');
          await withService(o, env, async (service) => {
            const token = await createManagerToken(
              service.store,
              dbFile,
              role,
              o.deploy ?? o.readDeployments!,
            );
            process.stdout.write(`${token}\n`);
          });
          return;
        }
        if ([o.admin, o.read, o.org].filter((x) => x !== undefined).length !== 1) {
          throw new DmError(
            'USAGE',
            'give exactly one of --admin, --read <registry> or --org <organisations>',
            {
              category: 'usage',
            },
          );
        }
        const organisations =
          o.org === undefined ? undefined : parseOrganisationList(o.org, '--org', 'usage');
        const expiresAt = o.expires === undefined ? null : Date.now() + parseDuration(o.expires);
        await withService(o, env, async (service) => {
          const created = o.admin
            ? await service.createToken({ admin: true, expiresAt })
            : organisations
              ? await service.createToken({ admin: false, registry: null, organisations, expiresAt })
              : await service.createToken({
                  admin: false,
                  registry: o.read === '*' ? null : o.read!,
                  expiresAt,
                });
          process.stdout.write(`${created}\n`);
        });
      },
    );
  token
    .command('list')
    .description('list the tokens: id, role, registry, created, expires, last used (never the token)')
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .addHelpText('after', '\nExample:\n  dm-registry token list')
    .action(async (o: CommonOptions) => {
      await withService(o, env, async (service) => {
        const iso = (t: number | null) => (t === null ? '-' : new Date(t).toISOString());
        const lines = (await service.listTokens()).map(
          (t) =>
            `${t.id}\t${t.role}\t${t.organisations.length ? `org:${t.organisations.join(',')}` : (t.registry ?? '-')}\tcreated ${iso(t.createdAt)}\texpires ${iso(t.expiresAt)}\tlast used ${iso(t.lastUsedAt)}`,
        );
        process.stdout.write(lines.length ? `${lines.join('\n')}\n` : 'no tokens\n');
      });
    });
  token
    .command('revoke <id-or-token>')
    .description(
      'revoke a token (by its id from `token list`, or the token itself); a running server stops accepting it within a second',
    )
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .addHelpText('after', '\nExample:\n  dm-registry token revoke 3')
    .action(async (idOrToken: string, o: CommonOptions) => {
      await withService(o, env, async (service) => {
        await service.revokeToken(idOrToken);
        process.stdout.write('revoked\n');
      });
    });
}
