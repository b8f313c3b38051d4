/**
 * The deployments database (docs/manager.md): opening it on SQLite or PostgreSQL, its schema and its
 * queries. An entry the server imports (docs/server.md "Where things are").
 */
export * from './database.js';
export * from './database-pg.js';
export * from './deployments-store.js';
export * from './operations-store.js';
export * from './schema-pg.js';
export * from './sqlite.js';
