/**
 * Opens the accounts database: Bun SQLite in WAL mode through drizzle,
 * with the drizzle-kit migrations under drizzle/ applied at open.
 */
import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import { migrate } from 'drizzle-orm/bun-sqlite/migrator';
import * as schema from './schema.ts';

export type AccountsDb = BunSQLiteDatabase<typeof schema>;

/** Where drizzle-kit writes migrations (repository root /drizzle). */
const MIGRATIONS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../drizzle');

/** Opens (creating when needed) the database at `path` (`:memory:` allowed) and migrates it. */
export function openDatabase(path: string): { sqlite: Database; db: AccountsDb } {
  if (path !== ':memory:' && !path.startsWith('file:')) mkdirSync(dirname(resolve(path)), { recursive: true });
  const sqlite = new Database(path, { create: true, strict: true });
  try {
    // WAL lets the server read while the keys script writes; busy_timeout
    // makes the two wait for each other instead of failing with SQLITE_BUSY.
    sqlite.exec('PRAGMA journal_mode = WAL');
    sqlite.exec('PRAGMA busy_timeout = 5000');
    sqlite.exec('PRAGMA synchronous = NORMAL');
    sqlite.exec('PRAGMA foreign_keys = ON');
    const db = drizzle(sqlite, { schema });
    migrate(db, { migrationsFolder: MIGRATIONS_DIR });
    return { sqlite, db };
  } catch (err) {
    sqlite.close();
    throw err;
  }
}

/** SQLite's per-connection data_version: changes when another connection commits. */
export function dataVersion(sqlite: Database): number {
  const row = sqlite.query('PRAGMA data_version').get() as { data_version: number } | null;
  return row?.data_version ?? 0;
}
