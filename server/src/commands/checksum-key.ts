/** `dm-registry checksum-key` (docs/integrity-store.md). */

import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { type CommonOptions, DATA_DIR_HELP, databaseTarget, localDir } from './target.js';

export function registerChecksumKey(program: Command, env: NodeJS.ProcessEnv): void {
  program
    .command('checksum-key')
    .description("print the checksum log's verifier key, for clients' checksumKey (docs/integrity-store.md)")
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .option('--checksum-key <file>', 'the signer key file (default log.key in the data directory)')
    .addHelpText(
      'after',
      '\nExamples:\n  dm-registry checksum-key --db file:./data/registry.db\n  dm-registry checksum-key --checksum-key /etc/dm-registry/log.key\n',
    )
    .action(async (o: CommonOptions & { checksumKey?: string }) => {
      const { loadChecksumKey } = await import('../checksums.js');
      const signer = loadChecksumKey({
        file: o.checksumKey ?? join(localDir(databaseTarget(o.db, env, o.dataDir)), 'log.key'),
        name: `${hostname().toLowerCase()}/checksums`,
      });
      process.stdout.write(`${signer.verifierKey}\n`);
    });
}
