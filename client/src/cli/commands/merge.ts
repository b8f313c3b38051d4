import { type Command, Option } from 'commander';
import { DmError } from '../../error.js';
import { action, warner } from '../context.js';

const EXAMPLES = `
Modes:
  user-data (default)  like cloud-init's user-data handler: each document's own merge_how decides how it
                       merges into the documents before it; default dict(replace)+list()+str(), so a later
                       document replaces top-level keys. Failing documents are skipped and reported.
  values               like -f/--values files (cloud-init's mergemanydict): later files win, deep merge of
                       mappings by default (list()+dict()+str()); any error stops the command.
  raw                  one merge of two files' documents with --merge-how (default list()+dict()+str());
                       merge_how keys in the documents are data.

Examples:
  dm merge base.yaml site.yaml
  dm merge base.yaml site.yaml --merge-how 'list(append)+dict(no_replace,recurse_list)+str()'
  dm merge --as values defaults.yaml team.yaml prod.yaml
  dm merge --as raw a.yaml b.yaml --merge-how 'dict(no_replace,recurse_list)+list(append)' -o json
`;

export function registerMergeCommand(program: Command): void {
  program
    .command('merge')
    .description('merge YAML documents with cloud-init merge strategies (docs/merging.md)')
    .argument('<file...>', 'YAML files; each document of a multi-document file is one source, in order')
    .addOption(
      new Option('--as <mode>', 'how to merge: user-data, values or raw')
        .choices(['user-data', 'values', 'raw'])
        .default('user-data'),
    )
    .option(
      '--merge-how <spec>',
      'merge specification for documents that name none, e.g. dict(replace)+list()+str()',
    )
    .addHelpText('after', EXAMPLES)
    .action(
      action(async (ctx, files, options) => {
        const { formatMergedYaml, loadMergeFiles, mergeLoadedDocuments, toPlainValue } = await import(
          '../../merge/index.js'
        );
        const mode = options.as as 'user-data' | 'values' | 'raw';
        if (mode === 'raw' && files.length !== 2) {
          throw new DmError('USAGE', `dm merge --as raw takes exactly two files; got ${files.length}`, {
            category: 'usage',
          });
        }
        const documents = loadMergeFiles(files, { cwd: ctx.cwd });
        const merged = mergeLoadedDocuments(documents, {
          as: mode,
          mergeHow: options.mergeHow as string | undefined,
        });
        const warn = warner(ctx);
        for (const said of merged.ignored) warn(said);
        for (const s of merged.skipped) warn(`skipped ${s.message} (${s.code})`);
        if (ctx.config.output === 'json') {
          return { data: { result: toPlainValue(merged.result), skipped: merged.skipped } };
        }
        ctx.streams.stdout(formatMergedYaml(merged.result));
        return undefined;
      }),
    );
}
