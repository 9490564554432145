/** drizzle-kit configuration for PostgreSQL (`bunx drizzle-kit generate --config drizzle.config.pg.ts`): the same tables as drizzle.config.ts. */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/accounts/postgres/schema.ts',
  out: './drizzle/postgres',
});
