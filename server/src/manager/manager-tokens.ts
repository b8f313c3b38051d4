/**
 * Where the manager keeps its state, and its tokens (docs/manager.md): `manager.db` beside the
 * server's database (SQLite; PostgreSQL for the manager is a later step), tokens stored as sha256
 * hashes like the server's own, printed once when created.
 */
import { dirname, join } from 'node:path';
import { openStateDatabase } from '../../../client/src/state/database.js';
import { OperationStore } from '../../../client/src/state/operations-store.js';
import { hashToken, newToken } from '../store/secrets.js';
import { parseScope } from './manager-access.js';

/** The manager's SQLite file and cache directory for a server database file. */
export function managerPaths(serverDbFile: string): { stateFile: string; dataDir: string } {
  const dir = dirname(serverDbFile);
  return { stateFile: join(dir, 'manager.db'), dataDir: join(dir, 'manager') };
}

/** Creates a deployment token (`deploy`: change and read; `read`: read only) for the scopes given. */
export function createManagerToken(
  serverDbFile: string,
  role: 'deploy' | 'read',
  scopes: readonly string[],
): string {
  const parsed = scopes.map(parseScope);
  const database = openStateDatabase(managerPaths(serverDbFile).stateFile);
  try {
    const token = newToken();
    new OperationStore(database).addToken(hashToken(token), role, parsed);
    return token;
  } finally {
    database.close();
  }
}
