/** drizzle-kit configuration for SQLite: the accounts schema and its generated migrations (PostgreSQL: drizzle.config.pg.ts). */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/accounts/sqlite/schema.ts',
  out: './drizzle/sqlite',
});
