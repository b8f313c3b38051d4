import type { Command } from 'commander';
import { action } from '../context.js';
import { formatTable, printable } from '../format.js';
import { registerPlanned } from './not-implemented.js';

export function registerResolveCommands(program: Command): void {
  registerPlanned(program, 'search', 'search templates on a registry server');

  program
    .command('versions <ref>')
    .description('list the versions of a template, newest first')
    .addHelpText('after', '\nExamples:\n  dm versions redis --registry-dir registry-fixtures\n')
    .action(
      action(async (ctx, [text]) => {
        const { listVersions } = await import('../../resolve/resolve-references.js');
        const result = await listVersions(text!, { config: ctx.config, registryDirs: ctx.registryDirs });
        return printable(result, (d) => `${d.template}\n${d.versions.map((v) => `  ${v}`).join('\n')}`);
      }),
    );

  program
    .command('resolve <ref...>')
    .description('resolve references to exact versions and digests (patch float, spec/registry.md §5)')
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
