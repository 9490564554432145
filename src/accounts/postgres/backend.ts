/**
 * The PostgreSQL backend: a pool of Bun's built-in SQL client through
 * drizzle, plus one LISTEN connection per server for news of key writes
 * by other servers. Several servers may share the database, so migrations run
 * under an advisory lock and a transaction that loses a race with another
 * server (a unique violation, a serialization failure or a deadlock) is
 * run again from the start, reading what the winner committed.
 */
import { SQL } from 'bun';
import { drizzle } from 'drizzle-orm/bun-sql';
import { migrate } from 'drizzle-orm/bun-sql/migrator';
import type { AccountRows, AccountsBackend } from '../backend.ts';
import { KEY_CHANGES_CHANNEL, PostgresRows, type PgAccountsDb } from './rows.ts';
import * as schema from './schema.ts';

/** Arbitrary constant naming the "accounts migrations" advisory lock. */
const MIGRATION_LOCK_ID = 7_340_221_001;
/** SQLSTATEs after which a transaction is worth running again. */
const RETRYABLE = new Set(['23505', '40001', '40P01']);
/** Attempts per transaction before the error is reported. */
const MAX_ATTEMPTS = 3;

/** Connects to `url` (postgres://…), applies the migrations in `migrationsDir` (null: already applied by the host) and returns the backend. */
export async function openPostgresBackend(url: string, migrationsDir: string | null, options: { maxConnections?: number } = {}): Promise<PostgresBackend> {
  const client = new SQL({ url, max: options.maxConnections ?? 10, idleTimeout: 30, connectionTimeout: 10 });
  try {
    if (migrationsDir !== null) await migrateLocked(client, migrationsDir);
    return new PostgresBackend(client);
  } catch (err) {
    await client.close();
    throw err;
  }
}

/** Applies the migrations on one reserved connection holding an advisory lock, so servers starting together migrate one at a time. */
async function migrateLocked(client: SQL, migrationsDir: string): Promise<void> {
  const conn = await client.reserve();
  try {
    await conn`select pg_advisory_lock(${MIGRATION_LOCK_ID})`;
    try {
      await migrate(drizzle({ client: conn as unknown as SQL, schema }), { migrationsFolder: migrationsDir });
    } finally {
      await conn`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`;
    }
  } finally {
    conn.release();
  }
}

/** AccountsBackend over a PostgreSQL pool. */
export class PostgresBackend implements AccountsBackend {
  readonly dialect = 'postgres' as const;
  private readonly db: PgAccountsDb;
  private readonly pooled: AccountRows;

  constructor(private readonly client: SQL) {
    this.db = drizzle({ client, schema });
    this.pooled = new PostgresRows(this.db);
  }

  async transaction<T>(work: (rows: AccountRows) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction((tx) => work(new PostgresRows(tx)));
      } catch (err) {
        if (attempt >= MAX_ATTEMPTS || !RETRYABLE.has(sqlState(err) ?? '')) throw err;
      }
    }
  }

  read<T>(work: (rows: AccountRows) => Promise<T>): Promise<T> {
    return work(this.pooled);
  }

  async watchKeyChanges(onChange: () => void): Promise<() => Promise<void>> {
    // Bun keeps one dedicated LISTEN connection, reconnects it with backoff
    // and runs the second callback after every (re)subscription.
    const subscription = await this.client.listen(KEY_CHANGES_CHANNEL, () => onChange(), () => onChange());
    return () => subscription.unlisten();
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

/** The SQLSTATE of a failed query (drizzle wraps the driver's error in `cause`). */
export function sqlState(err: unknown): string | null {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown; errno?: unknown }).errno ?? (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return null;
}
