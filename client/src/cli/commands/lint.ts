import type { Command } from 'commander';
import { action } from '../context.js';

const HELP = `
Checks a registry directory against the layout rules (docs/registry-layout.md): template and
version directory names, one template file per version, schema names, example.yaml, duplicate
versions, registry.yaml collection mappings; and every served version's example.yaml must expand
with no extra properties (EXAMPLE_FAILED; skip with --no-examples). Each finding has a stable code.

Exit status: 0 when there is no error finding (warnings allowed; with --strict none either), 4
when there is one. A template or version directory is not a registry root: exit 2, naming the
directory to lint instead.
With -o json: {findings, summary, nestedRegistries} on success; when there are errors, the usual
{"error": {"code": "LINT_FAILED", "message", "details": {findings, summary, nestedRegistries}}}.

Examples:
  dm lint registry-fixtures
  dm lint ./my-registry -o json
`;

export function registerLintCommand(program: Command): void {
  program
    .command('lint <dir>')
    .description('check a registry directory against the registry layout rules')
    .option('--no-examples', "do not expand each version's example.yaml")
    .option('--strict', 'fail (exit 4) on warnings too, as helm lint --strict')
    .addHelpText('after', HELP)
    .action(
      action(async (ctx, [dir], opts) => {
        const { lintRegistryDirectory } = await import('../../registry/lint-registry.js');
        const { DmError } = await import('../../error.js');
        const { count, formatTable, printResult } = await import('../format.js');
        const { printable } = await import('../../registry/content-names.js');
        const report = await lintRegistryDirectory(dir!, {
          examples: opts.examples !== false,
          cacheRoot: ctx.config.dirs.cache,
        });
        const text = (r: typeof report): string => {
          const { summary } = r;
          let out =
            r.findings.length === 0
              ? ''
              : formatTable(
                  ['SEVERITY', 'CODE', 'PATH', 'MESSAGE'],
                  // Names from the tree are escaped (control and bidi characters): docs/registry-layout.md.
                  r.findings.map((f) => [f.severity, f.code, printable(f.path), printable(f.message)]),
                );
          for (const nested of r.nestedRegistries) {
            out += `note: '${printable(nested)}' holds its own registry.yaml: a separate registry, not linted here (dm lint ${r.registry.replace(/\/+$/, '')}/${nested})\n`;
          }
          out +=
            `${r.registry}: ${count(summary.errors, 'error')}, ${count(summary.warnings, 'warning')} ` +
            `(${count(summary.templates, 'template')}, ${count(summary.versions, 'version')} served, ${count(summary.collections, 'named collection')})\n`;
          return out;
        };
        if (report.summary.templates === 0 && report.findings.length === 0) {
          throw new DmError('NO_TEMPLATES', `${dir}: no templates found: is this a registry root?`, {
            category: 'invalid-input',
            hint: 'a registry root holds <template>/<version>/ or <collection>/<template>/<version>/ directories (docs/registry-layout.md)',
          });
        }
        const strict = opts.strict === true && report.summary.warnings > 0;
        if (report.summary.errors === 0 && !strict) return { data: report, text };
        if (ctx.config.output !== 'json') printResult({ data: report, text }, ctx.config.output, ctx.streams);
        throw new DmError(
          'LINT_FAILED',
          report.summary.errors > 0
            ? `registry '${dir}' has ${count(report.summary.errors, 'lint error')}`
            : `registry '${dir}' has ${count(report.summary.warnings, 'lint warning')}, and --strict makes warnings fail`,
          {
            category: 'validation',
            details: {
              findings: report.findings,
              summary: report.summary,
              nestedRegistries: report.nestedRegistries,
            },
          },
        );
      }),
    );
}
