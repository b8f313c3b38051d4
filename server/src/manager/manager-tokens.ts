/**
 * Where the manager keeps its state, and its tokens (docs/manager.md): `manager.db` beside the
 * server's database on SQLite, the server's own PostgreSQL database when it runs on PostgreSQL
 * (docs/manager.md "Several replicas"); tokens stored as sha256 hashes like the server's own,
 * printed once when created.
 */
import { dirname, join } from 'node:path';
import {
  OperationStore,
  openStateDatabase,
  postgresStateDatabase,
  type StateDatabase,
} from '../../../client/src/state/index.js';
import { type StoreHandle, sharedPool } from '../store/open-store.js';
import { hashToken, newToken } from '../store/secrets.js';
import { parseScope } from './manager-access.js';

/** The manager's SQLite file and cache directory for a server database file. */
export function managerPaths(serverDbFile: string): { stateFile: string; dataDir: string } {
  const dir = dirname(serverDbFile);
  return { stateFile: join(dir, 'manager.db'), dataDir: join(dir, 'manager') };
}

/** The manager's state for the server's store: its PostgreSQL, or the SQLite file `stateFile`. */
export function openManagerState(store: StoreHandle, stateFile: string): StateDatabase {
  const shared = sharedPool(store);
  return shared ? postgresStateDatabase(shared.pool, shared.displayUrl) : openStateDatabase(stateFile);
}

/** Creates a deployment token (`deploy`: change and read; `read`: read only) for the scopes given. */
export async function createManagerToken(
  store: StoreHandle,
  serverDbFile: string,
  role: 'deploy' | 'read',
  scopes: readonly string[],
): Promise<string> {
  const parsed = scopes.map(parseScope);
  const database = openManagerState(store, managerPaths(serverDbFile).stateFile);
  try {
    const token = newToken();
    await new OperationStore(database).addToken(hashToken(token), role, parsed);
    return token;
  } finally {
    await database.close();
  }
}
