/** AccountStore on real SQLite (memory and file): keys, sessions, sign-in linking, usage flushing. */
import { afterAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAccounts } from '../../src/accounts/store.ts';
import { generateApiKey, hashSecret } from '../../src/accounts/secrets.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A store with a hand-moved clock. */
function clockedStore(path = ':memory:', opts = {}) {
  const clock = { t: Date.UTC(2026, 0, 10, 12, 0, 0) };
  const store = openAccounts(path, { now: () => clock.t, flushIntervalMs: 0, syncIntervalMs: 0, ...opts });
  return { store, clock };
}

const profile = (sub: string, email: string | null, emailVerified = true) => ({ provider: 'oidc', subject: sub, email, emailVerified, name: null });

describe('database', () => {
  test('file databases run in WAL mode with migrations applied and hold no secret', () => {
    const path = join(dir, 'wal.sqlite');
    const { store } = clockedStore(path);
    const { firstKey } = store.signIn(profile('s', 'a@example.test'));
    const session = store.createSession(store.findUserByEmail('a@example.test')!.id);
    store.close();
    const raw = new Database(path, { readonly: true });
    try {
      expect((raw.query('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe('wal');
      const tables = (raw.query("SELECT name FROM sqlite_master WHERE type='table'").all() as { name: string }[]).map((r) => r.name);
      expect(tables).toEqual(expect.arrayContaining(['users', 'identities', 'sessions', 'api_keys', 'usage_minutes', 'usage_days', '__drizzle_migrations']));
      const dump = JSON.stringify([raw.query('SELECT * FROM api_keys').all(), raw.query('SELECT * FROM sessions').all()]);
      expect(dump).not.toContain(firstKey!.secret);
      expect(dump).not.toContain(session.token);
      expect(dump).toContain(hashSecret(firstKey!.secret));
      expect(dump).toContain(hashSecret(session.token));
    } finally {
      raw.close();
    }
  });

  test('reopening keeps data and re-applies no migration', () => {
    const path = join(dir, 'reopen.sqlite');
    const a = clockedStore(path).store;
    const secret = a.signIn(profile('s', 'r@example.test')).firstKey!.secret;
    a.close();
    const b = clockedStore(path).store;
    expect(b.resolveApiKey(secret)?.tier).toBe('free');
    b.close();
  });
});

describe('key resolution', () => {
  test('valid, revoked, unknown and malformed keys', () => {
    const { store } = clockedStore();
    const { user, firstKey } = store.signIn(profile('k', 'k@example.test'));
    const secret = firstKey!.secret;
    expect(store.resolveApiKey(secret)).toEqual({ keyId: firstKey!.key.id, userId: user.id, tier: 'free' });
    expect(store.resolveApiKey(secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A'))).toBeNull();
    for (const junk of ['', 'ipi_', 'x'.repeat(10_000), "ipi_' OR 1=1 --", secret + 'x', secret.toUpperCase()]) expect(store.resolveApiKey(junk)).toBeNull();
    store.revokeKey(firstKey!.key.id);
    expect(store.resolveApiKey(secret)).toBeNull();
    store.close();
  });

  test('the hot path (resolve + count) runs no SQL', () => {
    const { store } = clockedStore();
    const { firstKey } = store.signIn(profile('hot', 'hot@example.test'));
    const sqlite = (store as unknown as { sqlite: Database }).sqlite;
    const saved = { query: sqlite.query, prepare: sqlite.prepare, run: sqlite.run, exec: sqlite.exec };
    const calls: string[] = [];
    for (const name of Object.keys(saved) as (keyof typeof saved)[]) {
      (sqlite as unknown as Record<string, unknown>)[name] = () => {
        calls.push(name);
        throw new Error('SQL on the hot path');
      };
    }
    try {
      for (let i = 0; i < 100; i++) {
        const r = store.resolveApiKey(firstKey!.secret);
        expect(r?.keyId).toBe(firstKey!.key.id);
        store.recordUsage(r!.keyId);
      }
      expect(store.resolveApiKey(generateApiKey())).toBeNull();
    } finally {
      Object.assign(sqlite, saved);
    }
    expect(calls).toEqual([]);
    store.flush();
    expect(store.usageReport(store.getKey(firstKey!.key.id)!.userId).totals.last_hour).toBe(100);
    store.close();
  });

  test('revoking with the wrong owner reports not found and leaves the key working', () => {
    const { store } = clockedStore();
    const a = store.signIn(profile('a', 'a@example.test'));
    const b = store.signIn(profile('b', 'b@example.test'));
    expect(store.revokeKey(a.firstKey!.key.id, b.user.id)).toBeNull();
    expect(store.resolveApiKey(a.firstKey!.secret)).not.toBeNull();
    expect(store.revokeKey('no-such-id', a.user.id)).toBeNull();
    store.close();
  });
});

describe('sign-in', () => {
  test('an operator-invited pro user is linked by verified email and keeps pro, without an extra key', () => {
    const { store } = clockedStore();
    const invited = store.grantKeyByEmail('vip@example.test', 'pro', 'invite');
    const r = store.signIn(profile('vip-sub', 'vip@example.test'));
    expect(r.user.id).toBe(invited.user.id);
    expect(r.user.tier).toBe('pro');
    expect(r.newUser).toBe(false);
    expect(r.firstKey).toBeNull();
    expect(store.listKeys(r.user.id)).toHaveLength(1);
  });

  test('an unverified email never links to an existing account', () => {
    const { store } = clockedStore();
    const victim = store.grantKeyByEmail('victim@example.test', 'pro', 'invite');
    const r = store.signIn(profile('attacker', 'victim@example.test', false));
    expect(r.user.id).not.toBe(victim.user.id);
    expect(r.user.tier).toBe('free');
    expect(r.user.email).toBeNull();
    expect(r.firstKey?.key.tier).toBe('free');
  });
});

describe('sessions', () => {
  test('rotation after a day gives a new id; the old one works only for a short grace period', () => {
    const { store, clock } = clockedStore();
    const { user } = store.signIn(profile('s', 's@example.test'));
    const s = store.createSession(user.id);
    expect(store.validateSession(s.token)?.rotated).toBeNull();
    clock.t += 25 * 3_600_000;
    const v = store.validateSession(s.token)!;
    expect(v.rotated).not.toBeNull();
    expect(v.rotated!.token).not.toBe(s.token);
    expect(v.expiresAt).toBe(clock.t + 30 * 86_400_000);
    expect(store.validateSession(s.token)?.rotated).toBeNull(); // in-flight request within grace
    clock.t += 61_000;
    expect(store.validateSession(s.token)).toBeNull();
    expect(store.validateSession(v.rotated!.token)?.user.id).toBe(user.id);
  });

  test('sessions expire; logout deletes; junk tokens are refused', () => {
    const { store, clock } = clockedStore(':memory:', { sessionTtlMs: 10_000, sessionRotateMs: 1e12 });
    const { user } = store.signIn(profile('e', 'e@example.test'));
    const a = store.createSession(user.id);
    const b = store.createSession(user.id);
    store.deleteSession(b.token);
    expect(store.validateSession(b.token)).toBeNull();
    expect(store.validateSession(a.token)).not.toBeNull();
    clock.t += 10_001;
    expect(store.validateSession(a.token)).toBeNull();
    for (const junk of ['', 'x'.repeat(500), "' OR 1=1 --"]) expect(store.validateSession(junk)).toBeNull();
  });

  test('a first key waits in memory for one showing only', () => {
    const { store, clock } = clockedStore();
    const { user } = store.signIn(profile('r', 'r@example.test'));
    const s = store.createSession(user.id);
    store.holdKeyForReveal(s.token, 'ipi_secret');
    expect(store.takeKeyForReveal(s.token)).toBe('ipi_secret');
    expect(store.takeKeyForReveal(s.token)).toBeNull();
    store.holdKeyForReveal(s.token, 'ipi_late');
    clock.t += 11 * 60_000;
    expect(store.takeKeyForReveal(s.token)).toBeNull();
  });
});

describe('usage', () => {
  test('counts stay in memory until flush, then land in SQLite in one transaction', () => {
    const path = join(dir, 'usage.sqlite');
    const { store, clock } = clockedStore(path);
    const { user, firstKey } = store.signIn(profile('u', 'u@example.test'));
    const id = firstKey!.key.id;
    for (let i = 0; i < 5; i++) store.recordUsage(id);
    clock.t += 60_000;
    for (let i = 0; i < 3; i++) store.recordUsage(id);
    const peek = new Database(path, { readonly: true });
    const count = () => (peek.query('SELECT coalesce(sum(count),0) AS n FROM usage_minutes').get() as { n: number }).n;
    expect(count()).toBe(0);
    expect(store.usageReport(user.id).totals.last_hour).toBe(8);
    store.flush();
    expect(count()).toBe(8);
    expect((peek.query('SELECT count(*) AS n FROM usage_minutes').get() as { n: number }).n).toBe(2);
    expect((peek.query('SELECT sum(count) AS n FROM usage_days').get() as { n: number }).n).toBe(8);
    expect(store.usageReport(user.id).totals).toEqual({ last_hour: 8, last_24h: 8, last_30d: 8 });
    expect(store.listKeys(user.id)[0]!.lastUsedAt).toBe(clock.t);
    store.recordUsage(id);
    store.close(); // close flushes
    expect(count()).toBe(9);
    peek.close();
  });

  test('windows: old minutes fall out of the hour but stay in the day and month', () => {
    const { store, clock } = clockedStore();
    const { user, firstKey } = store.signIn(profile('w', 'w@example.test'));
    store.recordUsage(firstKey!.key.id, clock.t - 3 * 3_600_000);
    store.recordUsage(firstKey!.key.id, clock.t - 3 * 86_400_000);
    store.recordUsage(firstKey!.key.id);
    store.flush();
    expect(store.usageReport(user.id).totals).toEqual({ last_hour: 1, last_24h: 2, last_30d: 3 });
  });

  test('a failed flush keeps the counts for the next one', () => {
    const path = join(dir, 'flushfail.sqlite');
    const { store } = clockedStore(path);
    const { user, firstKey } = store.signIn(profile('f', 'f@example.test'));
    store.recordUsage(firstKey!.key.id);
    store.recordUsage(firstKey!.key.id);
    // Another connection holds the write lock, so the flush transaction fails.
    const blocker = new Database(path);
    blocker.exec('PRAGMA busy_timeout = 0');
    blocker.exec('BEGIN IMMEDIATE');
    const s = store as unknown as { sqlite: Database };
    s.sqlite.exec('PRAGMA busy_timeout = 0');
    expect(() => store.flush()).toThrow();
    blocker.exec('ROLLBACK');
    blocker.close();
    expect(store.usageReport(user.id).totals.last_hour).toBe(2);
    store.flush();
    expect(store.usageReport(user.id).totals.last_hour).toBe(2);
    store.close();
  });
});
