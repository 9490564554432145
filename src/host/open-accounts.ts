/** Opening the accounts database from the source tree or from inside the compiled binary (`serve`, `keys`, each worker). */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AccountsOptions, AccountStore } from '../accounts/store.ts';
import { isCompiledBinary } from '../feeds/compiled-binary.ts';

/**
 * Opens the accounts database (a SQLite path or a postgres:// URL). From the
 * source tree the store finds the repository's drizzle/ folder itself; a
 * compiled binary cannot reach it, so it points the store at the copy
 * embedded with `bun build --asset drizzle` (under the binary's virtual root).
 */
export async function openAccountStore(dbPath: string, options: AccountsOptions = {}): Promise<AccountStore> {
  const store = await import('../accounts/store.ts');
  if (!isCompiledBinary()) return store.openAccounts(dbPath, options);
  // A worker thread's Bun.main is its own module: the primary passes the root it found.
  const root = options.migrationsRoot ?? embeddedMigrationsRoot();
  if (!existsSync(join(root, 'sqlite', 'meta', '_journal.json'))) {
    throw new Error(`no database migrations inside this binary (looked in ${root}); rebuild it with bun run compile`);
  }
  return store.openAccounts(dbPath, { ...options, migrationsRoot: root });
}


/** Where `bun build --asset drizzle` put the migrations in this binary (beside its main module). */
export function embeddedMigrationsRoot(): string {
  return join(dirname(Bun.main), 'drizzle');
}
