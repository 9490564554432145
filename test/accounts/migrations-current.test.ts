/** A restart of a SQLite accounts database skips drizzle's migrator only when it would apply nothing (src/accounts/sqlite/migrations-current.ts). */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { Database } from 'bun:sqlite';
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite } from '../../src/accounts/sqlite/db.ts';
import { sqliteMigrationsCurrent } from '../../src/accounts/sqlite/migrations-current.ts';

const migrations = join(import.meta.dir, '../../drizzle/sqlite');
const dir = mkdtempSync(join(tmpdir(), 'ipintel-migrations-current-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tables = (db: Database) => (db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);

/** A copy of the repository's migrations folder, to edit. */
function copyOfMigrations(name: string): string {
  const copy = join(dir, name);
  cpSync(migrations, copy, { recursive: true });
  return copy;
}

describe('sqliteMigrationsCurrent', () => {
  test('false for a new file, true once migrated, false again when the journal gains a later migration', async () => {
    const path = join(dir, 'a.sqlite');
    const raw = new Database(path, { create: true });
    expect(sqliteMigrationsCurrent(raw, migrations)).toBe(false);
    raw.close();
    const { sqlite } = await openSqlite(path, migrations);
    expect(sqliteMigrationsCurrent(sqlite, migrations)).toBe(true);
    const later = copyOfMigrations('later');
    const journalPath = join(later, 'meta/_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8'));
    const last = journal.entries[journal.entries.length - 1];
    journal.entries.push({ ...last, idx: last.idx + 1, when: last.when + 1, tag: '0099_later' });
    writeFileSync(journalPath, JSON.stringify(journal));
    writeFileSync(join(later, '0099_later.sql'), 'CREATE TABLE later_table (id integer PRIMARY KEY);');
    expect(sqliteMigrationsCurrent(sqlite, later)).toBe(false);
    sqlite.close();
    // And the open applies it: the skip never hides a migration the file lacks.
    const reopened = await openSqlite(path, later);
    expect(tables(reopened.sqlite)).toContain('later_table');
    expect(sqliteMigrationsCurrent(reopened.sqlite, later)).toBe(true);
    reopened.sqlite.close();
  });

  test('an unreadable or empty journal is never "current": the migrator runs and says what is wrong', async () => {
    const path = join(dir, 'b.sqlite');
    (await openSqlite(path, migrations)).sqlite.close();
    const db = new Database(path);
    expect(sqliteMigrationsCurrent(db, join(dir, 'nowhere'))).toBe(false);
    const empty = copyOfMigrations('empty');
    writeFileSync(join(empty, 'meta/_journal.json'), JSON.stringify({ entries: [] }));
    expect(sqliteMigrationsCurrent(db, empty)).toBe(false);
    const broken = copyOfMigrations('broken');
    writeFileSync(join(broken, 'meta/_journal.json'), '{ not json');
    expect(sqliteMigrationsCurrent(db, broken)).toBe(false);
    db.close();
    await expect(openSqlite(path, join(dir, 'nowhere'))).rejects.toThrow();
  });

  test('a restart of a migrated file does not read the migrations (the migrator is not loaded)', async () => {
    const path = join(dir, 'c.sqlite');
    (await openSqlite(path, migrations)).sqlite.close();
    // The journal stays, the SQL files go: drizzle's migrator reads every file it lists and would throw.
    const journalOnly = copyOfMigrations('journal-only');
    for (const entry of JSON.parse(readFileSync(join(journalOnly, 'meta/_journal.json'), 'utf8')).entries) unlinkSync(join(journalOnly, `${entry.tag}.sql`));
    const { sqlite } = await openSqlite(path, journalOnly);
    expect(tables(sqlite)).toEqual(expect.arrayContaining(['users', 'api_keys', 'key_changes', '__drizzle_migrations']));
    sqlite.close();
    // A new file with the same folder still needs the files: the migrator runs and fails.
    await expect(openSqlite(join(dir, 'd.sqlite'), journalOnly)).rejects.toThrow();
  });
});
