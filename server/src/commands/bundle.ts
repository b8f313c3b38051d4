/** `dm-registry bundle keygen|export|import`: air-gap bundles (docs/mirroring.md). */

import type { Command } from 'commander';
import { type CommonOptions, collect, DATA_DIR_HELP, databaseTarget, openDatabase } from './target.js';

export function registerBundle(program: Command, env: NodeJS.ProcessEnv): void {
  const bundle = program
    .command('bundle')
    .description('air-gap bundles: templates carried on a file (docs/mirroring.md)')
    .addHelpText(
      'after',
      '\nExamples:\n  dm-registry bundle keygen --out bundle.key\n  dm-registry bundle export --out site.tgz --registry github.com/acme/templates --sign-key bundle.key\n  dm-registry bundle import site.tgz --verify-key bundle.key.pub\n',
    );
  bundle
    .command('keygen')
    .description('make an Ed25519 key pair for signing bundles: FILE (0600) and FILE.pub')
    .requiredOption('--out <file>', 'where to write the private key (never overwritten)')
    .addHelpText('after', '\nExample:\n  dm-registry bundle keygen --out bundle.key\n')
    .action(async (o: { out: string }) => {
      const { generateBundleKey } = await import('../mirror/bundle-format.js');
      const keys = await generateBundleKey(o.out);
      process.stdout.write(`private key ${keys.privateKey}\npublic key ${keys.publicKey}\n`);
    });
  bundle
    .command('export')
    .description('write the selected versions, and every template they reference, into one .tar.gz')
    .requiredOption('--out <file>', 'the bundle to write')
    .option('--registry <name>', 'carry this registry whole (repeatable; default: every registry)', collect)
    .option('--lock <file>', 'carry the versions this dm.lock pins (repeatable)', collect)
    .option('--since <bundle>', 'carry only what this earlier bundle lacks (a delta)')
    .option('--sign-key <file>', 'sign the manifest with this key (dm-registry bundle keygen)')
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .addHelpText(
      'after',
      '\nExample:\n  dm-registry bundle export --out site.tgz --lock dm.lock --sign-key bundle.key\n',
    )
    .action(
      async (
        o: CommonOptions & {
          out: string;
          registry?: string[];
          lock?: string[];
          since?: string;
          signKey?: string;
        },
      ) => {
        const { exportBundle } = await import('../mirror/bundle.js');
        const { store, close } = await openDatabase(databaseTarget(o.db, env, o.dataDir));
        try {
          const r = await exportBundle(store, {
            out: o.out,
            ...(o.registry ? { registries: o.registry } : {}),
            ...(o.lock ? { locks: o.lock } : {}),
            ...(o.since ? { since: o.since } : {}),
            ...(o.signKey ? { signKey: o.signKey } : {}),
          });
          for (const ref of r.unresolved)
            process.stderr.write(`warning: ${ref} is not on this server; not carried\n`);
          process.stdout.write(
            `${r.file}: ${r.versions} versions, ${r.blobs} files, ${r.bytes} bytes, digest ${r.digest}\n`,
          );
        } finally {
          await close();
        }
      },
    );
  bundle
    .command('import <file>')
    .description('verify a bundle completely, then add its versions in one transaction')
    .option('--verify-key <file>', 'refuse the bundle unless this public key verifies its signature')
    .option(
      '--into-indexed-registries',
      'let the bundle add versions to registries this server indexes from their own source (refused by default)',
    )
    .option('--db <url>', 'database (env DM_REGISTRY_DB)')
    .option('--data-dir <dir>', DATA_DIR_HELP)
    .addHelpText(
      'after',
      '\nExample:\n  dm-registry bundle import site.tgz --verify-key bundle.key.pub --db file:./data/registry.db\n',
    )
    .action(
      async (file: string, o: CommonOptions & { verifyKey?: string; intoIndexedRegistries?: boolean }) => {
        const { importBundle, importSummary } = await import('../mirror/bundle.js');
        const { store, close } = await openDatabase(databaseTarget(o.db, env, o.dataDir));
        try {
          const r = await importBundle(store, file, {
            ...(o.verifyKey ? { verifyKey: o.verifyKey } : {}),
            intoIndexedRegistries: o.intoIndexedRegistries === true,
          });
          if (r.quarantined > 0) {
            process.stderr.write(
              `warning: ${r.quarantined} versions differ from what this database first saw; quarantined, not added\n`,
            );
          }
          process.stdout.write(importSummary(file, r, o.verifyKey));
        } finally {
          await close();
        }
      },
    );
}
