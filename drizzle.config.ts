/** drizzle-kit configuration: the accounts schema and its generated SQL migrations. */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/accounts/schema.ts',
  out: './drizzle',
});
