/**
 * Whether a SQLite accounts database already holds every migration of a
 * folder, so a restart need not load drizzle's migrator: that module loads
 * node:crypto to hash the migration files (~20 ms of CPU on the start's
 * critical path; BENCHMARKS.md, start-up) and then finds nothing to apply.
 */
import type { Database } from 'bun:sqlite';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** drizzle's default migrations table (MigrationConfig.migrationsTable unset, as src/accounts/sqlite/db.ts calls it). */
const MIGRATIONS_TABLE = '__drizzle_migrations';

/**
 * True when drizzle's migrator would apply nothing: the database's latest
 * recorded migration is at least as recent as the journal's latest entry
 * (drizzle's own test in SQLiteSyncDialect.migrate: a migration runs when its
 * `when` is later than the last `created_at`). False whenever that cannot be
 * shown (no table yet, an unreadable journal): the migrator then runs and
 * reports any problem itself.
 */
export function sqliteMigrationsCurrent(sqlite: Database, migrationsDir: string): boolean {
  let latest: number;
  try {
    const journal = JSON.parse(readFileSync(join(migrationsDir, 'meta', '_journal.json'), 'utf8')) as { entries?: Array<{ when?: unknown }> };
    const whens = (journal.entries ?? []).map((e) => e.when);
    if (whens.length === 0 || !whens.every((w): w is number => typeof w === 'number' && Number.isFinite(w))) return false;
    latest = Math.max(...whens);
  } catch {
    return false;
  }
  try {
    const row = sqlite.query(`SELECT created_at FROM "${MIGRATIONS_TABLE}" ORDER BY created_at DESC LIMIT 1`).get() as { created_at: unknown } | null;
    return row !== null && Number(row.created_at) >= latest;
  } catch {
    return false; // no migrations table yet: a new database
  }
}
