/**
 * Child process for the after-swap kill test: syncs registry 1 of the database given in argv[2]
 * (an SQLite file or a `postgres://` URL; its own files in argv[3]) and, right after the swap
 * transaction commits, says so on stdout and blocks until it is killed.
 */
import { writeSync } from 'node:fs';
import { serviceOn } from '../helpers.js';

const [db = '', dir = ''] = process.argv.slice(2);
const { service } = await serviceOn(db, dir);
const outcome = await service.sync(1, 'manual', {
  afterSwap: () => {
    writeSync(1, 'after-swap\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
  },
});
writeSync(1, `finished ${JSON.stringify(outcome)}\n`);
