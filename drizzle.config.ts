/**
 * drizzle-kit configuration for the server's SQLite store: `npx drizzle-kit generate` writes SQL
 * migrations for server/src/store/sqlite/schema.ts into migrations/sqlite/ (applied at start by the
 * server). PostgreSQL has its own: drizzle.postgres.config.ts. Hand-written steps (FTS5) are
 * custom migrations: `npx drizzle-kit generate --custom --name=<name>`.
 */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './server/src/store/sqlite/schema.ts',
  out: './migrations/sqlite',
});
