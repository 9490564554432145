/**
 * Opens the SQLite accounts database: Bun SQLite in WAL mode through
 * drizzle, with the drizzle-kit migrations of drizzle/sqlite applied.
 */
import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import * as schema from './schema.ts';
import { sqliteMigrationsCurrent } from './migrations-current.ts';

export type SqliteAccountsDb = BunSQLiteDatabase<typeof schema>;

/**
 * Opens (creating when needed) the database at `path` (`:memory:` allowed) and
 * applies the migrations in `migrationsDir`; null: the host applied them (a
 * pool's worker), and the migrator (with node:crypto) is not even loaded, nor
 * is it when the file already holds every migration of the folder.
 */
export async function openSqlite(path: string, migrationsDir: string | null): Promise<{ sqlite: Database; db: SqliteAccountsDb }> {
  if (path !== ':memory:' && !path.startsWith('file:')) mkdirSync(dirname(resolve(path)), { recursive: true });
  const sqlite = new Database(path, { create: true, strict: true });
  try {
    // WAL lets the server read while the keys script writes; busy_timeout
    // makes the two wait for each other instead of failing with SQLITE_BUSY.
    // busy_timeout first: setting the journal mode itself waits on a lock while
    // another connection (a worker thread opening at the same moment) holds one.
    sqlite.exec('PRAGMA busy_timeout = 5000');
    sqlite.exec('PRAGMA journal_mode = WAL');
    sqlite.exec('PRAGMA synchronous = NORMAL');
    sqlite.exec('PRAGMA foreign_keys = ON');
    const db = drizzle(sqlite, { schema });
    // A restart finds its migrations applied and skips the migrator's load (migrations-current.ts).
    if (migrationsDir !== null && !sqliteMigrationsCurrent(sqlite, migrationsDir)) {
      const { migrate } = await import('drizzle-orm/bun-sqlite/migrator');
      migrate(db, { migrationsFolder: migrationsDir });
    }
    return { sqlite, db };
  } catch (err) {
    sqlite.close();
    throw err;
  }
}
