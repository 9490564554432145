/**
 * The SQLite backend: one connection per process. drizzle's SQLite
 * transactions are synchronous and the shared store logic is async, so
 * transactions are opened here (BEGIN IMMEDIATE ... COMMIT) and every use of
 * the connection is queued: no other request's statement can land inside
 * an open transaction while it awaits.
 */
import type { Database } from 'bun:sqlite';
import type { AccountRows, AccountsBackend } from '../backend.ts';
import { Serial } from '../serial.ts';
import { openSqlite, type SqliteAccountsDb } from './db.ts';
import { SqliteRows } from './rows.ts';

/** Opens the database file at `path` (`:memory:` allowed) with the migrations in `migrationsDir` applied (null: already applied by the host). */
export async function openSqliteBackend(path: string, migrationsDir: string | null): Promise<SqliteBackend> {
  return new SqliteBackend(await openSqlite(path, migrationsDir));
}

/** AccountsBackend over one Bun SQLite connection. */
export class SqliteBackend implements AccountsBackend {
  readonly dialect = 'sqlite' as const;
  private readonly rows: AccountRows;
  private readonly queue = new Serial();

  /** The connection (tests inspect it; nothing else should). */
  readonly sqlite: Database;

  constructor(opened: { sqlite: Database; db: SqliteAccountsDb }) {
    this.sqlite = opened.sqlite;
    this.rows = new SqliteRows(opened.db);
  }

  transaction<T>(work: (rows: AccountRows) => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      // IMMEDIATE takes the write lock up front: a deferred transaction that
      // reads then writes can fail at once under WAL when another process
      // wrote in between, whatever busy_timeout says.
      this.sqlite.exec('BEGIN IMMEDIATE');
      try {
        const result = await work(this.rows);
        this.sqlite.exec('COMMIT');
        return result;
      } catch (err) {
        if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK');
        throw err;
      }
    });
  }

  read<T>(work: (rows: AccountRows) => Promise<T>): Promise<T> {
    return this.queue.run(() => work(this.rows));
  }

  close(): Promise<void> {
    return this.queue.run(async () => this.sqlite.close());
  }
}
