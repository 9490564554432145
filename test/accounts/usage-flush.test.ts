/** The usage flush in chunks (src/accounts/usage-flush.ts): the serving thread turns between transactions, every count written once. */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AccountsBackend } from '../../src/accounts/backend.ts';
import { DEFAULT_MIGRATIONS_ROOT, migrationsFolder } from '../../src/accounts/migrations.ts';
import { openSqliteBackend } from '../../src/accounts/sqlite/backend.ts';
import { AccountStore } from '../../src/accounts/store.ts';
import { splitBatch, type UsageBatch } from '../../src/accounts/usage-counter.ts';
import { FLUSH_CHUNK_KEYS } from '../../src/accounts/usage-flush.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-usage-flush-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEYS = FLUSH_CHUNK_KEYS * 2 + 44; // three chunks
const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);

/** A SQLite store whose transactions are counted, and the `failAt`-th of them (1-based, 0: none) refused. */
async function countedStore(name: string) {
  const path = join(dir, name);
  const inner = await openSqliteBackend(path, migrationsFolder(DEFAULT_MIGRATIONS_ROOT, 'sqlite'));
  const state = { transactions: 0, failAt: 0 };
  const backend: AccountsBackend = {
    dialect: inner.dialect,
    transaction: (work) => {
      state.transactions++;
      if (state.transactions === state.failAt) return Promise.reject(new Error('database is locked'));
      return inner.transaction(work);
    },
    read: (work) => inner.read(work),
    close: () => inner.close(),
  };
  const store = await AccountStore.start(backend, { now: () => T0, flushIntervalMs: 0, syncIntervalMs: 0 });
  const ids: string[] = [];
  for (let i = 0; i < KEYS; i++) ids.push((await store.grantKeyByEmail(`u${i}@example.test`, 'pro', 'k')).created.key.id);
  const sums = () => {
    const peek = new Database(path, { readonly: true });
    try {
      const n = (sql: string) => (peek.query(sql).get() as { n: number | null }).n ?? 0;
      return { minutes: n('SELECT sum(count) AS n FROM usage_minutes'), days: n('SELECT sum(count) AS n FROM usage_days'), keysUsed: n('SELECT count(*) AS n FROM api_keys WHERE last_used_at IS NOT NULL') };
    } finally {
      peek.close();
    }
  };
  return { store, ids, state, sums };
}

describe('splitBatch', () => {
  test('every key in exactly one chunk with all its rows, at most maxKeys keys a chunk', () => {
    const batch: UsageBatch = { minutes: [], days: [], lastUsed: [] };
    for (let k = 0; k < 25; k++) {
      for (let m = 0; m < 3; m++) batch.minutes.push({ keyId: `k${k}`, minute: m * 60_000, count: k + m });
      batch.days.push({ keyId: `k${k}`, day: 0, count: 3 * k + 3 });
      batch.lastUsed.push({ keyId: `k${k}`, at: k });
    }
    const chunks = splitBatch(batch, 10);
    expect(chunks.length).toBe(3);
    const seen = new Map<string, number>();
    chunks.forEach((c, i) => {
      const keys = new Set([...c.minutes, ...c.days, ...c.lastUsed].map((r) => r.keyId));
      expect(keys.size).toBeLessThanOrEqual(10);
      for (const k of keys) {
        expect(seen.has(k)).toBe(false);
        seen.set(k, i);
      }
    });
    expect(chunks.flatMap((c) => c.minutes)).toHaveLength(75);
    expect(chunks.flatMap((c) => c.days)).toEqual(batch.days);
    expect(chunks.flatMap((c) => c.lastUsed)).toEqual(batch.lastUsed);
    for (const c of chunks) for (const m of c.minutes) expect(c.days.some((d) => d.keyId === m.keyId)).toBe(true);
    expect(splitBatch({ minutes: [], days: [], lastUsed: [] }, 10)).toEqual([{ minutes: [], days: [], lastUsed: [] }]);
  });
});

describe('a usage flush of many keys', () => {
  test('writes a few keys per transaction and lets the event loop turn between them, every count once', async () => {
    const { store, ids, state, sums } = await countedStore('turns.sqlite');
    for (const id of ids) for (let i = 0; i < 3; i++) store.recordUsage(id, T0);
    const before = state.transactions;
    let flushed = false;
    let turnedDuringFlush = false;
    // A request arriving while the flush runs: answered before the flush ends, not after the whole batch.
    setImmediate(() => (turnedDuringFlush = !flushed));
    await store.flush();
    flushed = true;
    expect(turnedDuringFlush).toBe(true);
    expect(state.transactions - before).toBe(3);
    expect(sums()).toEqual({ minutes: 3 * KEYS, days: 3 * KEYS, keysUsed: KEYS });
    await store.close();
  });

  test('a transaction that fails keeps its counts and every later chunk\'s; the next flush writes them once', async () => {
    const { store, ids, state, sums } = await countedStore('fails.sqlite');
    for (const id of ids) store.recordUsage(id, T0);
    state.failAt = state.transactions + 2; // the second chunk
    await expect(store.flush()).rejects.toThrow('database is locked');
    expect(sums().minutes).toBe(FLUSH_CHUNK_KEYS);
    // Counted while the flush was failing: added to what was handed back.
    store.recordUsage(ids[KEYS - 1], T0);
    await store.flush();
    expect(sums()).toEqual({ minutes: KEYS + 1, days: KEYS + 1, keysUsed: KEYS });
    await store.flush();
    expect(sums().minutes).toBe(KEYS + 1);
    await store.close();
  });
});
