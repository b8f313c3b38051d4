/**
 * Child process for the after-swap kill test: syncs registry 1 of the database given in argv[2]
 * and, right after the swap transaction commits, says so on stdout and blocks until it is killed.
 */
import { randomBytes } from 'node:crypto';
import { writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { silentLogger } from '../../../server/src/log.js';
import { defaultSourceFactory, RegistryService } from '../../../server/src/service.js';
import { openStore } from '../../../server/src/store/db.js';

const file = process.argv[2]!;
const store = openStore(file);
const service = new RegistryService({
  store,
  sources: defaultSourceFactory({ gitCacheDir: join(dirname(file), 'git') }),
  secretKey: randomBytes(32),
  log: (level, message, fields) => silentLogger.log(level, message, fields),
});
const outcome = await service.sync(1, 'manual', {
  afterSwap: () => {
    writeSync(1, 'after-swap\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
  },
});
writeSync(1, `finished ${JSON.stringify(outcome)}\n`);
