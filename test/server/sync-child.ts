/**
 * Child process for the killed-sync test: syncs registry 1 of the database given in argv[2] (an
 * SQLite file or a `postgres://` URL; its own files in argv[3]) and, halfway through the swap
 * transaction, says so on stdout and blocks until it is killed.
 */
import { writeSync } from 'node:fs';
import { serviceOn } from './helpers.js';

const [db = '', dir = ''] = process.argv.slice(2);
const { service } = await serviceOn(db, dir);
const outcome = await service.sync(1, 'manual', {
  midSwap: () => {
    writeSync(1, 'mid-swap\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
  },
});
writeSync(1, `finished ${JSON.stringify(outcome)}\n`);
