/**
 * drizzle-kit configuration: `npx drizzle-kit generate` writes SQL migrations for
 * server/src/store/schema.ts into migrations/ (applied at start by the server).
 * Hand-written steps (FTS5) are custom migrations: `npx drizzle-kit generate --custom --name=<name>`.
 */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './server/src/store/schema.ts',
  out: './migrations',
});
