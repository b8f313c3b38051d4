/**
 * drizzle-kit configuration for the server's PostgreSQL store: `npx drizzle-kit generate --config
 * drizzle.postgres.config.ts` writes SQL migrations for server/src/store/postgres/schema.ts into
 * migrations/postgres/ (applied at start by the server, like SQLite's). The one custom migration,
 * 0000_extensions, creates pg_trgm (docs/server.md, "Store").
 */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './server/src/store/postgres/schema.ts',
  out: './migrations/postgres',
});
