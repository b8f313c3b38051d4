import type { Command } from 'commander';
import { action, warner } from '../context.js';
import { count, formatTable, printable } from '../format.js';

export function registerResolveCommands(program: Command): void {
  program
    .command('search <query> [where]')
    .description(
      'search templates on a registry server (--registry-url), or in oci://<host> (a dm-registry) or oci://<host>/<owner>/<repo> (its dm-index)',
    )
    .option('--collection <name>', 'only this collection')
    .option('--in-registry <host/owner/repo>', 'only this registry')
    .option('--limit <n>', 'hits per page', '20')
    .option('--page <n>', 'page', '1')
    .addHelpText('after', '\nExamples:\n  dm search redis --registry-url http://localhost:8080\n')
    .action(
      action(async (ctx, [query, where], opts) => {
        const { MAX_SEARCH_LIMIT, searchOci, searchTemplates } = await import('../../resolve/search.js');
        if (Number(opts.limit) > MAX_SEARCH_LIMIT) {
          const { DmError } = await import('../../error.js');
          throw new DmError(
            'INVALID_FLAG_VALUE',
            `--limit ${String(opts.limit)} is more than ${MAX_SEARCH_LIMIT}, the most hits a registry server gives per page`,
            { category: 'usage', hint: 'use --page to see further hits' },
          );
        }
        const limit = Number(opts.limit);
        const page = Number(opts.page);
        const search = where
          ? (q: string, o: Parameters<typeof searchTemplates>[1]) => searchOci(q, where, o)
          : searchTemplates;
        const result = await search(query!, {
          config: ctx.config,
          collection: opts.collection as string | undefined,
          registry: opts.inRegistry as string | undefined,
          limit,
          page,
        });
        return printable(result, (r) =>
          r.hits.length === 0 && r.total > 0
            ? `page ${page} is past the last hit: ${count(r.total, 'template matches', 'templates match')} '${r.query}' (${count(Math.ceil(r.total / limit), 'page')} of ${limit})`
            : r.hits.length === 0
              ? `no templates match '${r.query}'`
              : `${formatTable(
                  ['REFERENCE', 'LATEST', 'DESCRIPTION'],
                  r.hits.map((h) => [h.reference, h.latestVersion ?? '', h.description ?? h.title ?? '']),
                )}${r.total} matches`,
        );
      }),
    );

  program
    .command('versions <ref>')
    .description('list the versions of a template, newest first')
    .addHelpText(
      'after',
      '\nWith a version (redis:v1.0): the versions it may float to, and the one it resolves to.\n\nExamples:\n  dm versions redis --registry-dir registry-fixtures\n  dm versions redis:v1.0 --registry-dir registry-fixtures\n',
    )
    .action(
      action(async (ctx, [text]) => {
        const { listVersions } = await import('../../resolve/resolve-references.js');
        const result = await listVersions(text!, { config: ctx.config, registryDirs: ctx.registryDirs });
        const { isPrerelease, parseVersion } = await import('../../reference/version.js');
        const pre = (v: string) => {
          try {
            return isPrerelease(parseVersion(v));
          } catch {
            return false;
          }
        };
        // Newest first: the latest is the first that is not a pre-release.
        const latest = result.versions.find((v) => !pre(v));
        const mark = (v: string) =>
          result.resolvesTo !== undefined
            ? v === result.resolvesTo
              ? `  (${result.requested} resolves to it)`
              : ''
            : v === latest
              ? '  (latest)'
              : pre(v)
                ? '  (pre-release)'
                : '';
        return printable(
          result,
          (d) =>
            `${d.template}${d.requested ? ` ${d.requested}` : ''}\n${d.versions.map((v) => `  ${v}${mark(v)}`).join('\n')}`,
        );
      }),
    );

  program
    .command('resolve <ref...>')
    .description('resolve references to exact versions and digests (patch float: v1.0 → the newest v1.0.x)')
    .addHelpText(
      'after',
      '\nExamples:\n  dm resolve redis:v1.0 --registry-dir registry-fixtures\n  dm resolve github.com/acme/templates/db/postgres:=v1.2.0 -o json\n',
    )
    .action(
      action(async (ctx, refs) => {
        const { resolveReferences } = await import('../../resolve/resolve-references.js');
        const resolved = await resolveReferences(refs, {
          config: ctx.config,
          registryDirs: ctx.registryDirs,
          warn: warner(ctx),
        });
        return printable(resolved, (list) =>
          formatTable(
            ['REFERENCE', 'VERSION', 'DIGEST'],
            list.map((r) => [`${r.reference} →`, r.version, r.digest]),
          ),
        );
      }),
    );
}
