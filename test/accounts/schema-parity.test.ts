/**
 * The SQLite and PostgreSQL schemas are the same tables: same columns
 * (name, nullability, default), keys, indexes and foreign keys, so the
 * store's behaviour and an operator's data copy carry over unchanged.
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { getTableConfig as pgConfig, type PgTable } from 'drizzle-orm/pg-core';
import { getTableConfig as sqliteConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import * as pg from '../../src/accounts/postgres/schema.ts';
import * as sqlite from '../../src/accounts/sqlite/schema.ts';

type Config = ReturnType<typeof pgConfig> | ReturnType<typeof sqliteConfig>;

/** A dialect-free description of a table. */
function shape(c: Config) {
  return {
    name: c.name,
    columns: c.columns.map((col) => ({ name: col.name, notNull: col.notNull, primary: col.primary, default: col.default ?? null, enum: col.enumValues ?? null })),
    primaryKeys: c.primaryKeys.map((pk) => pk.columns.map((col) => col.name)),
    indexes: c.indexes
      .map((i) => ({ name: i.config.name, unique: i.config.unique, on: i.config.columns.map((col) => (col as { name: string }).name) }))
      .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '')),
    foreignKeys: c.foreignKeys.map((fk) => {
      const ref = fk.reference();
      return { columns: ref.columns.map((col) => col.name), to: ref.foreignColumns.map((col) => col.name), onDelete: fk.onDelete };
    }),
  };
}

test('both dialects export the same tables', () => {
  expect(Object.keys(pg).sort()).toEqual(Object.keys(sqlite).sort());
  expect(Object.keys(pg).length).toBe(7);
});

for (const name of Object.keys(sqlite).sort()) {
  test(`${name}: same columns, keys and indexes in SQLite and PostgreSQL`, () => {
    const s = shape(sqliteConfig((sqlite as Record<string, SQLiteTable>)[name]!));
    const p = shape(pgConfig((pg as Record<string, PgTable>)[name]!));
    expect(p).toEqual(s);
    expect(s.columns.length).toBeGreaterThan(1);
  });
}
