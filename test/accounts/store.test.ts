/** AccountStore on real SQLite: the shared behaviour suite on a file, plus what is SQLite's own (WAL, files, locks, upgrades). */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { Database } from 'bun:sqlite';
import { cpSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAccounts, type AccountsOptions } from '../../src/accounts/store.ts';
import { openSqlite } from '../../src/accounts/sqlite/db.ts';
import { generateApiKey, hashSecret } from '../../src/accounts/secrets.ts';
import { storeBehaviour, type StoreFixture } from './helpers/store-behaviour.ts';

const root = join(import.meta.dir, '../..');
const dir = mkdtempSync(join(tmpdir(), 'ipintel-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A store with a hand-moved clock. */
async function clockedStore(path: string, opts: AccountsOptions = {}) {
  const clock = { t: Date.UTC(2026, 0, 10, 12, 0, 0) };
  const store = await openAccounts(path, { now: () => clock.t, flushIntervalMs: 0, syncIntervalMs: 0, ...opts });
  return { store, clock };
}

const profile = (sub: string, email: string | null, emailVerified = true) => ({ provider: 'oidc', subject: sub, email, emailVerified, name: null });

describe('SQLite: shared store behaviour', () => {
  const path = join(dir, 'behaviour.sqlite');
  let peek: Database;
  beforeAll(async () => {
    // Creates and migrates the file, so the read-only peek below can open it.
    (await openSqlite(path, join(root, 'drizzle/sqlite'))).sqlite.close();
    peek = new Database(path, { readonly: true });
  });
  afterAll(() => peek.close());
  const fixture: StoreFixture = {
    open: (options) => openAccounts(path, options),
    async storedUsage(keyId) {
      const m = peek.query('SELECT coalesce(sum(count),0) AS n, count(*) AS rows FROM usage_minutes WHERE key_id = ?').get(keyId) as { n: number; rows: number };
      const d = peek.query('SELECT coalesce(sum(count),0) AS n FROM usage_days WHERE key_id = ?').get(keyId) as { n: number };
      return { minutes: m.n, days: d.n, minuteRows: m.rows };
    },
  };
  storeBehaviour(() => fixture);
});

describe('SQLite only', () => {
  test('file databases run in WAL mode with migrations applied and hold no secret', async () => {
    const path = join(dir, 'wal.sqlite');
    const { store } = await clockedStore(path);
    expect(store.dialect).toBe('sqlite');
    const { firstKey } = await store.signIn(profile('s', 'a@example.test'));
    const session = await store.createSession((await store.findUserByEmail('a@example.test'))!.id);
    await store.close();
    const raw = new Database(path, { readonly: true });
    try {
      expect((raw.query('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe('wal');
      const tables = (raw.query("SELECT name FROM sqlite_master WHERE type='table'").all() as { name: string }[]).map((r) => r.name);
      expect(tables).toEqual(expect.arrayContaining(['users', 'identities', 'sessions', 'api_keys', 'key_changes', 'usage_minutes', 'usage_days', '__drizzle_migrations']));
      expect((raw.query('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n).toBe(2);
      const dump = JSON.stringify([raw.query('SELECT * FROM api_keys').all(), raw.query('SELECT * FROM sessions').all()]);
      expect(dump).not.toContain(firstKey!.secret);
      expect(dump).not.toContain(session.token);
      expect(dump).toContain(hashSecret(firstKey!.secret));
      expect(dump).toContain(hashSecret(session.token));
    } finally {
      raw.close();
    }
  });

  test('a failed flush keeps the counts for the next one', async () => {
    const path = join(dir, 'flushfail.sqlite');
    const { store } = await clockedStore(path);
    const { user, firstKey } = await store.signIn(profile('f', 'f@example.test'));
    store.recordUsage(firstKey!.key.id);
    store.recordUsage(firstKey!.key.id);
    // Another connection holds the write lock, so the flush transaction fails.
    const blocker = new Database(path);
    blocker.exec('PRAGMA busy_timeout = 0');
    blocker.exec('BEGIN IMMEDIATE');
    const s = store as unknown as { backend: { sqlite: Database } };
    s.backend.sqlite.exec('PRAGMA busy_timeout = 0');
    await expect(store.flush()).rejects.toThrow();
    blocker.exec('ROLLBACK');
    blocker.close();
    expect((await store.usageReport(user.id)).totals.last_hour).toBe(2);
    await store.flush();
    const peek = new Database(path, { readonly: true });
    expect((peek.query('SELECT sum(count) AS n FROM usage_minutes').get() as { n: number }).n).toBe(2);
    peek.close();
    expect((await store.usageReport(user.id)).totals.last_hour).toBe(2);
    await store.close();
  });

  test('a flush that fails halfway through its statements rolls back, and the reused statements write every count after', async () => {
    const path = join(dir, 'flushhalfway.sqlite');
    const { store } = await clockedStore(path);
    const { user, firstKey } = await store.signIn(profile('h', 'h@example.test'));
    const id = firstKey!.key.id;
    store.recordUsage(id);
    await store.flush(); // the flush's statements are prepared now
    store.recordUsage(id);
    store.recordUsage(id);
    // The minute row is written, then the day row is refused: the whole batch must roll back.
    const other = new Database(path);
    other.exec("CREATE TRIGGER refuse_day BEFORE INSERT ON usage_days BEGIN SELECT RAISE(ABORT, 'refused'); END");
    other.exec("CREATE TRIGGER refuse_day_update BEFORE UPDATE ON usage_days BEGIN SELECT RAISE(ABORT, 'refused'); END");
    await expect(store.flush()).rejects.toThrow('refused');
    const peek = () => (other.query('SELECT sum(count) AS n FROM usage_minutes').get() as { n: number }).n;
    expect(peek()).toBe(1);
    other.exec('DROP TRIGGER refuse_day');
    other.exec('DROP TRIGGER refuse_day_update');
    await store.flush();
    expect(peek()).toBe(3);
    expect((other.query('SELECT sum(count) AS n FROM usage_days').get() as { n: number }).n).toBe(3);
    other.close();
    expect((await store.usageReport(user.id)).totals.last_hour).toBe(3);
    await store.close();
  });

  test('a database made before the key change counter existed upgrades in place and keeps its keys', async () => {
    // drizzle/sqlite as it was before 0001: only the first migration.
    const oldRoot = join(dir, 'old-migrations');
    cpSync(join(root, 'drizzle/sqlite'), join(oldRoot, 'sqlite'), { recursive: true });
    const journalPath = join(oldRoot, 'sqlite/meta/_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8'));
    journal.entries = journal.entries.slice(0, 1);
    writeFileSync(journalPath, JSON.stringify(journal));
    const path = join(dir, 'upgrade.sqlite');
    const old = (await openSqlite(path, join(oldRoot, 'sqlite'))).sqlite;
    const secret = generateApiKey();
    old.run("INSERT INTO users (id, email, name, tier, created_at) VALUES ('u1', 'old@example.test', NULL, 'pro', 1)");
    old.run("INSERT INTO api_keys (id, user_id, tier, name, prefix, secret_hash, created_at) VALUES ('k1', 'u1', 'pro', 'old', ?, ?, 1)", [secret.slice(0, 12), hashSecret(secret)]);
    old.close();

    const { store } = await clockedStore(path);
    const { store: other } = await clockedStore(path);
    try {
      expect(store.resolveApiKey(secret)).toEqual({ keyId: 'k1', userId: 'u1', tier: 'pro' });
      await other.revokeKey('k1');
      await store.syncKeys();
      expect(store.resolveApiKey(secret)).toBeNull();
    } finally {
      await store.close();
      await other.close();
    }
  });
});

describe('SQLite: a database the host migrated (a pool worker)', () => {
  test('opens without reading the migrations; without `migrated` the same missing folder is an error', async () => {
    const path = join(dir, 'host-migrated.sqlite');
    const { store: host } = await clockedStore(path);
    const { created } = await host.grantKeyByEmail('worker@example.test', 'pro', 'k');
    await host.close();
    const nowhere = join(dir, 'no-migrations-here');
    const { store: worker } = await clockedStore(path, { migrationsRoot: nowhere, migrated: true });
    try {
      expect(worker.resolveApiKey(created.secret)?.tier).toBe('pro');
    } finally {
      await worker.close();
    }
    await expect(clockedStore(path, { migrationsRoot: nowhere })).rejects.toThrow();
  });
});
