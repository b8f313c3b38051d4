/**
 * drizzle-kit configuration for the client's deployments database: `npx drizzle-kit generate
 * --config drizzle.client.config.ts` writes SQL migrations for client/src/state/schema.ts into
 * migrations/client/ (applied when the client opens its database).
 */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './client/src/state/schema.ts',
  out: './migrations/client',
});
