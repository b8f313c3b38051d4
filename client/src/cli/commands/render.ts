/**
 * `dm render <file|dir>… [--validate] [--lenient-substitution]` (docs/layering.md "Command line"):
 * rendered documents as a multi-document YAML stream, or a JSON array with `-o json`. Errors carry
 * Deckhand's error kinds as codes; exit 4 for InvalidDocumentFormat, 3 for a missing file, 1 otherwise.
 */
import type { Command } from 'commander';
import { action, warner } from '../context.js';

export function registerRenderCommand(program: Command): void {
  program
    .command('render <paths...>')
    .description('render layered documents (Deckhand-style layering, replacement and substitution)')
    .option('--validate', 'pre-validate the documents against Deckhand schemas first')
    .option('--lenient-substitution', 'skip substitutions whose source or source data is missing')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  dm render site/                      # every *.yaml/*.yml under site/, sorted',
        '  dm render global.yaml site.yaml -o json',
        '  dm render docs/ --validate',
        '',
      ].join('\n'),
    )
    .action(
      action(async (ctx, paths, options) => {
        const { renderFiles } = await import('../../layer/render-files.js');
        const documents = await renderFiles(paths, {
          cwd: ctx.cwd,
          validate: options.validate === true,
          lenientSubstitution: options.lenientSubstitution === true,
          onWarning: (w) => warner(ctx)(w.message),
        });
        if (ctx.config.output === 'json') return { data: documents };
        const { formatYamlDocuments } = await import('../../document/yaml.js');
        ctx.streams.stdout(formatYamlDocuments(documents));
        return undefined;
      }),
    );
}
