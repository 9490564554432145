/**
 * Issue 17 finding 5: a key made by another process (`bun run keys create`)
 * works on a running server the moment that process returns, not after the
 * server's next periodic sync. A cache miss asks the database; misses share
 * syncs so unknown keys cost a bounded amount of database work; revocation
 * through the server stays immediate; the revoked-id memory is bounded.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AccountRows, AccountsBackend } from '../../src/accounts/backend.ts';
import { KeyCache } from '../../src/accounts/key-cache.ts';
import { DEFAULT_MIGRATIONS_ROOT, migrationsFolder } from '../../src/accounts/migrations.ts';
import { generateApiKey } from '../../src/accounts/secrets.ts';
import { openSqliteBackend } from '../../src/accounts/sqlite/backend.ts';
import { AccountStore, openAccounts } from '../../src/accounts/store.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { runKeys } from './helpers/keys-script.ts';

const dir = mkdtempSync(join(tmpdir(), 'ipintel-fresh-key-'));
const db = join(dir, 'accounts.sqlite');
let server: RunningServer;
beforeAll(async () => {
  // The server's accounts as `bun run start` opens them (periodic sync every second).
  server = await startTestServer({ IPINTEL_DB: db });
}, 120_000);
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

const lastLine = (s: string) => s.trimEnd().split('\n').at(-1)!;

/** GET /v1/ip/current (no-store: carries the limit headers) with a key. */
function withKey(key: string) {
  return fetch(`${server.url}/v1/ip/current?fields=ip`, { headers: { 'x-api-key': key } });
}

describe('a key created by another process works at once', () => {
  test('created through a second store on the same database (what the keys script does), used immediately', async () => {
    const other = await openAccounts(db, { flushIntervalMs: 0, syncIntervalMs: 0 });
    try {
      for (let i = 0; i < 3; i++) {
        const { created } = await other.grantKeyByEmail(`fresh-${i}@example.test`, 'pro', 'fresh');
        const res = await withKey(created.secret);
        expect(res.status).toBe(200);
        expect(res.headers.get('x-ratelimit-tier')).toBe('pro');
      }
    } finally {
      await other.close();
    }
  });

  test('bun run keys create while the server runs: the printed key is accepted by the next request', async () => {
    const r = await runKeys(db, 'create', '--email', 'cli-fresh@example.test', '--tier', 'free');
    expect(r.code).toBe(0);
    const res = await withKey(lastLine(r.stdout));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-tier')).toBe('free');
  }, 60_000);

  test('revocation through the server is still immediate (a miss does not bring a revoked key back)', async () => {
    const { created } = await server.services.accounts.grantKeyByEmail('revoked-now@example.test', 'free', 'r');
    expect((await withKey(created.secret)).status).toBe(200);
    await server.services.accounts.revokeKey(created.key.id);
    expect((await withKey(created.secret)).status).toBe(401);
  });
});

/** A SQLite backend that counts change-counter reads (one per sync), and can be made to fail them. */
async function countingBackend(path: string): Promise<{ backend: AccountsBackend; counterReads: () => number; failReads: (fail: boolean) => void }> {
  const inner = await openSqliteBackend(path, migrationsFolder(DEFAULT_MIGRATIONS_ROOT, 'sqlite'));
  let reads = 0;
  let failing = false;
  const counting = (rows: AccountRows): AccountRows =>
    new Proxy(rows, {
      get(target, prop, receiver) {
        if (prop === 'keyChangeSeq') {
          reads++;
          if (failing) return () => Promise.reject(new Error('database is locked'));
        }
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  const backend: AccountsBackend = {
    dialect: inner.dialect,
    transaction: (work) => inner.transaction((rows) => work(counting(rows))),
    read: (work) => inner.read((rows) => work(counting(rows))),
    close: () => inner.close(),
  };
  return { backend, counterReads: () => reads, failReads: (fail) => (failing = fail) };
}

describe('cache misses share syncs', () => {
  test('500 concurrent unknown keys cost at most two change-counter reads, and a key created before they arrive is found', async () => {
    const path = join(dir, 'misses.sqlite');
    const { backend, counterReads } = await countingBackend(path);
    const store = await AccountStore.start(backend, { flushIntervalMs: 0, syncIntervalMs: 0 });
    const writer = await openAccounts(path, { flushIntervalMs: 0, syncIntervalMs: 0 });
    try {
      const { created } = await writer.grantKeyByEmail('burst@example.test', 'free', 'b');
      const before = counterReads();
      const unknown = Array.from({ length: 500 }, () => store.resolveApiKeyNow(generateApiKey()));
      const fresh = store.resolveApiKeyNow(created.secret);
      expect(await Promise.all(unknown)).toEqual(Array.from({ length: 500 }, () => null));
      expect((await fresh)?.keyId).toBe(created.key.id);
      expect(counterReads() - before).toBeLessThanOrEqual(2);
      // A hit needs no database at all, and answers synchronously.
      const reads = counterReads();
      expect(store.resolveApiKeyNow(created.secret)).toEqual({ keyId: created.key.id, userId: expect.any(String), tier: 'free' });
      expect(counterReads()).toBe(reads);
      // Not key-shaped: refused without asking the database.
      expect(store.resolveApiKeyNow('x'.repeat(10_000))).toBeNull();
      expect(counterReads()).toBe(reads);
    } finally {
      await writer.close();
      await store.close();
    }
  });

  test('a miss arriving while a sync is reading waits for a later sync (it may have read the counter before the key existed)', async () => {
    const path = join(dir, 'racing.sqlite');
    const store = await openAccounts(path, { flushIntervalMs: 0, syncIntervalMs: 0 });
    const writer = await openAccounts(path, { flushIntervalMs: 0, syncIntervalMs: 0 });
    try {
      const early = store.resolveApiKeyNow(generateApiKey()); // starts a sync before the key exists
      const { created } = await writer.grantKeyByEmail('racing@example.test', 'pro', 'r');
      const late = store.resolveApiKeyNow(created.secret);
      expect(await early).toBeNull();
      expect((await late)?.tier).toBe('pro');
    } finally {
      await writer.close();
      await store.close();
    }
  });
});

describe('a failing database', () => {
  test('a miss is answered as unknown (never a crash), logged once per run of failures, and cached keys still resolve', async () => {
    const path = join(dir, 'failing.sqlite');
    const { backend, failReads } = await countingBackend(path);
    const store = await AccountStore.start(backend, { flushIntervalMs: 0, syncIntervalMs: 0 });
    const lines: string[] = [];
    const original = console.error;
    console.error = (line: string) => void lines.push(line);
    try {
      const { created } = await store.grantKeyByEmail('cached@example.test', 'free', 'c');
      failReads(true);
      for (let i = 0; i < 3; i++) expect(await store.resolveApiKeyNow(generateApiKey())).toBeNull();
      expect(lines).toEqual(['accounts: key lookup for a cache miss failed: database is locked']);
      expect(store.resolveApiKeyNow(created.secret)).not.toBeNull();
      failReads(false);
      expect(await store.resolveApiKeyNow(generateApiKey())).toBeNull();
      failReads(true);
      expect(await store.resolveApiKeyNow(generateApiKey())).toBeNull();
      expect(lines).toHaveLength(2); // a new run of failures is logged again
    } finally {
      console.error = original;
      failReads(false);
      await store.close();
    }
  });
});

describe('the revoked-id memory of the key cache is bounded', () => {
  test('driven past its bound it keeps the newest ids only, and still fences them', () => {
    const cache = new KeyCache(3);
    const entry = (n: number) => ({ keyId: `k${n}`, userId: 'u', tier: 'free' as const });
    for (let n = 0; n < 5; n++) cache.removeById(`k${n}`);
    expect(cache.revokedCount).toBe(3);
    // The newest revocations still keep a stale read from re-adding their keys.
    for (const n of [2, 3, 4]) {
      cache.add(`h${n}`, entry(n));
      expect(cache.get(`h${n}`)).toBeNull();
    }
    // The oldest were forgotten (a sync that started before them finished long ago).
    cache.add('h0', entry(0));
    expect(cache.get('h0')).toEqual(entry(0));
    for (let n = 5; n < 1_000; n++) cache.removeById(`k${n}`);
    expect(cache.revokedCount).toBe(3);
  });
});
