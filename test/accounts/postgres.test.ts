/**
 * Accounts on a real PostgreSQL (IPINTEL_DB=postgres://…) started by this
 * test on 127.0.0.1 from Debian's `postgresql` binaries: the shared store
 * behaviour, what is PostgreSQL's own (several servers on one database,
 * migrations, failures), the keys script, and sign-in plus key
 * create/revoke over HTTP.
 *
 * Without the binaries the suite is skipped with a message, except under
 * CI (the CI variable set), where that is a failure.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { SQL } from 'bun';
import { openAccounts, type AccountStore } from '../../src/accounts/store.ts';
import { hashSecret } from '../../src/accounts/secrets.ts';
import { TestClient } from './helpers/client.ts';
import { keysScriptBehaviour } from './helpers/keys-script.ts';
import { startMockIdp, type MockIdp } from './helpers/mock-idp.ts';
import { postgresUnavailable, startPostgres, type TestPostgres } from './helpers/postgres-server.ts';
import { storeBehaviour, type StoreFixture } from './helpers/store-behaviour.ts';
import { oidcEnv, startTestApp } from './helpers/test-app.ts';
import { startTestServer } from '../helpers/test-server.ts';

const unavailable = postgresUnavailable();
if (unavailable && process.env.CI) {
  test('PostgreSQL binaries are installed (required in CI)', () => {
    throw new Error(`cannot run the PostgreSQL tests: ${unavailable}`);
  });
} else if (unavailable) {
  console.warn(`SKIPPING test/accounts/postgres.test.ts: ${unavailable}`);
}

const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);

describe.skipIf(unavailable !== null)('PostgreSQL', () => {
  let pg: TestPostgres;
  /** A plain client on the behaviour database, to look at what the store wrote. */
  let peek: SQL;
  let behaviourUrl = '';
  let keysUrl = '';

  beforeAll(async () => {
    pg = await startPostgres();
    behaviourUrl = await pg.database('behaviour');
    keysUrl = await pg.database('keys_script');
    // Migrates the database, so `peek` sees the tables from the start.
    await (await openAccounts(behaviourUrl, { flushIntervalMs: 0, syncIntervalMs: 0 })).close();
    peek = new SQL({ url: behaviourUrl, max: 1 });
  }, 120_000);

  afterAll(async () => {
    await peek?.close();
    await pg?.stop();
  }, 60_000);

  describe('shared store behaviour', () => {
    const fixture: StoreFixture = {
      open: (options) => openAccounts(behaviourUrl, options),
      async storedUsage(keyId) {
        const [m] = await peek`select coalesce(sum(count), 0)::int as n, count(*)::int as rows from usage_minutes where key_id = ${keyId}`;
        const [d] = await peek`select coalesce(sum(count), 0)::int as n from usage_days where key_id = ${keyId}`;
        return { minutes: m.n, days: d.n, minuteRows: m.rows };
      },
    };
    storeBehaviour(() => fixture);
  });

  describe('PostgreSQL only', () => {
    const stores: AccountStore[] = [];
    const open = async (url: string) => {
      const s = await openAccounts(url, { now: () => T0, flushIntervalMs: 0, syncIntervalMs: 0 });
      stores.push(s);
      return s;
    };
    afterAll(async () => {
      for (const s of stores) await s.close();
    });

    test('the active-key cap holds under concurrent creates from two servers on one database (issue 26)', async () => {
      const a = await open(behaviourUrl);
      const b = await open(behaviourUrl);
      const { user } = await a.signIn({ provider: 'oidc', subject: 'cap-two-servers', email: 'cap-two-servers@example.test', emailVerified: true, name: 'Cap' });
      const cap = 25;
      const outcomes = await Promise.all(
        Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).createKey(user.id, `k${i}`, 'free', cap).then(() => 'created', (e: Error) => e.name)),
      );
      expect(outcomes.filter((o) => o === 'created')).toHaveLength(cap - 1); // the sign-in's first key is the 25th
      expect(outcomes.filter((o) => o !== 'created').every((o) => o === 'KeyCapReached')).toBe(true);
      const [row] = await peek`select count(*)::int as n from api_keys where user_id = ${user.id} and revoked_at is null`;
      expect(row.n).toBe(cap);
    }, 60_000);

    test('the migrations ran once; times are exact bigints; only hashes of secrets are stored', async () => {
      const store = await open(behaviourUrl);
      expect(store.dialect).toBe('postgres');
      const { user, firstKey } = await store.signIn({ provider: 'oidc', subject: 'pg-only', email: 'pg-only@example.test', emailVerified: true, name: null });
      const session = await store.createSession(user.id);
      const tables = (await peek`select table_name from information_schema.tables where table_schema = 'public'`).map((r: { table_name: string }) => r.table_name);
      expect(tables.sort()).toEqual(['api_keys', 'identities', 'key_changes', 'sessions', 'usage_days', 'usage_minutes', 'users']);
      const [migrations] = await peek`select count(*)::int as n from drizzle.__drizzle_migrations`;
      expect(migrations.n).toBe(1);
      const [col] = await peek`select data_type from information_schema.columns where table_name = 'api_keys' and column_name = 'created_at'`;
      expect(col.data_type).toBe('bigint');
      expect((await store.getKey(firstKey!.key.id))?.createdAt).toBe(T0);
      const dump = JSON.stringify([await peek`select * from api_keys`, await peek`select * from sessions`]);
      expect(dump).not.toContain(firstKey!.secret);
      expect(dump).not.toContain(session.token);
      expect(dump).toContain(hashSecret(firstKey!.secret));
      expect(dump).toContain(hashSecret(session.token));
    });

    test('servers starting together on an empty database migrate it once, one at a time', async () => {
      const url = await pg.database('fresh_start');
      // Enough servers at once that, without the advisory lock, two of them run CREATE TABLE together.
      const started = await Promise.all(Array.from({ length: 8 }, () => openAccounts(url, { flushIntervalMs: 0, syncIntervalMs: 0 })));
      const check = new SQL({ url, max: 1 });
      try {
        const granted = await started[0]!.grantKeyByEmail('together@example.test', 'free', 'k');
        await started[7]!.syncKeys();
        expect(started[7]!.resolveApiKey(granted.created.secret)?.keyId).toBe(granted.created.key.id);
        const [m] = await check`select count(*)::int as n from drizzle.__drizzle_migrations`;
        expect(m.n).toBe(1);
      } finally {
        await check.close();
        for (const s of started) await s.close();
      }
    });

    test('two servers granting to the same new email at the same moment end with one user holding both keys', async () => {
      const a = await open(behaviourUrl);
      const b = await open(behaviourUrl);
      for (let i = 0; i < 5; i++) {
        const email = `race-${i}@example.test`;
        const [ra, rb] = await Promise.all([a.grantKeyByEmail(email, 'free', 'a'), b.grantKeyByEmail(email, 'pro', 'b')]);
        expect(ra.user.id).toBe(rb.user.id);
        const [u] = await peek`select count(*)::int as n, max(tier) as tier from users where email = ${email}`;
        expect(u.n).toBe(1);
        expect(u.tier).toBe('pro');
        expect((await a.listKeys(ra.user.id)).map((k) => k.tier).sort()).toEqual(['free', 'pro']);
      }
    });

    test('a failed flush keeps the counts in memory and the next flush writes them once', async () => {
      const url = await pg.database('flush_fail');
      const store = await open(url);
      const { user, created } = await store.grantKeyByEmail('flush@example.test', 'free', 'k');
      store.recordUsage(created.key.id);
      store.recordUsage(created.key.id);
      const admin = new SQL({ url, max: 1 });
      try {
        // The table the flush writes to is gone for a moment: the transaction fails and rolls back.
        await admin`alter table usage_days rename to usage_days_away`;
        await expect(store.flush()).rejects.toThrow();
        await admin`alter table usage_days_away rename to usage_days`;
        const [before] = await admin`select coalesce(sum(count), 0)::int as n from usage_minutes`;
        expect(before.n).toBe(0); // the minute rows of the failed transaction were rolled back too
        expect((await store.usageReport(user.id)).totals.last_hour).toBe(2);
        await store.flush();
        const [m] = await admin`select coalesce(sum(count), 0)::int as n from usage_minutes`;
        const [d] = await admin`select coalesce(sum(count), 0)::int as n from usage_days`;
        expect([m.n, d.n]).toEqual([2, 2]);
        const [k] = await admin`select last_used_at from api_keys where id = ${created.key.id}`;
        expect(Number(k.last_used_at)).toBe(T0);
        expect((await store.usageReport(user.id)).totals.last_hour).toBe(2);
      } finally {
        await admin.close();
      }
    });

    /** Waits (at most `ms`) until `probe` holds; returns whether it does. */
    const eventually = async (probe: () => boolean, ms: number) => {
      const deadline = Date.now() + ms;
      while (!probe() && Date.now() < deadline) await Bun.sleep(10);
      return probe();
    };

    test("another server's key writes arrive by NOTIFY, with polling off", async () => {
      const writer = await open(behaviourUrl);
      const listener = await openAccounts(behaviourUrl, { flushIntervalMs: 0, syncIntervalMs: 0, keyChangeNotifications: true });
      stores.push(listener);
      const { created } = await writer.grantKeyByEmail('notify@example.test', 'pro', 'n');
      expect(await eventually(() => listener.resolveApiKey(created.secret) !== null, 2_000)).toBe(true);
      await writer.revokeKey(created.key.id);
      expect(await eventually(() => listener.resolveApiKey(created.secret) === null, 2_000)).toBe(true);
      // Without notifications (and without polling) nothing arrives: the above was not luck.
      const deaf = await open(behaviourUrl);
      const second = await writer.grantKeyByEmail('notify@example.test', 'free', 'n2');
      expect(await eventually(() => listener.resolveApiKey(second.created.secret) !== null, 2_000)).toBe(true);
      expect(deaf.resolveApiKey(second.created.secret)).toBeNull();
    });

    test('key writes made while the LISTEN connection was down are caught up when it reconnects', async () => {
      const url = await pg.database('listen_drop');
      const writer = await open(url);
      const listener = await openAccounts(url, { flushIntervalMs: 0, syncIntervalMs: 0, keyChangeNotifications: true });
      stores.push(listener);
      const warm = await writer.grantKeyByEmail('warm@example.test', 'free', 'w');
      expect(await eventually(() => listener.resolveApiKey(warm.created.secret) !== null, 2_000)).toBe(true);
      const admin = new SQL({ url: pg.adminUrl, max: 1 });
      try {
        // Keep the listener from reconnecting while the write happens, then cut its LISTEN connection.
        await admin.unsafe('ALTER DATABASE listen_drop ALLOW_CONNECTIONS false');
        const cut = await admin`select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = 'listen_drop' and query ilike 'listen%'`;
        expect(cut.length).toBe(1);
        const missed = await writer.grantKeyByEmail('missed@example.test', 'pro', 'm');
        await Bun.sleep(300);
        expect(listener.resolveApiKey(missed.created.secret)).toBeNull();
        await admin.unsafe('ALTER DATABASE listen_drop ALLOW_CONNECTIONS true');
        expect(await eventually(() => listener.resolveApiKey(missed.created.secret) !== null, 20_000)).toBe(true);
      } finally {
        await admin.unsafe('ALTER DATABASE listen_drop ALLOW_CONNECTIONS true').catch(() => {});
        await admin.close();
      }
    }, 40_000);

    test('a database that cannot be reached is named without its password', async () => {
      const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
      const port = probe.port;
      probe.stop(true);
      const err = await openAccounts(`postgres://ipintel:s3cret-pw@127.0.0.1:${port}/accounts`).then(
        () => null,
        (e: Error) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect(err!.message).toContain(`postgres://ipintel:***@127.0.0.1:${port}/accounts`);
      expect(err!.message).not.toContain('s3cret-pw');
    }, 30_000);
  });

  describe('over HTTP', () => {
    let idp: MockIdp;
    beforeAll(() => {
      idp = startMockIdp();
    });
    afterAll(() => idp.stop());

    test('sign-in, key creation and revocation with the immediate 401, on PostgreSQL', async () => {
      const app = await startTestApp(oidcEnv(idp.url, idp.clientId, idp.clientSecret), { dbPath: await pg.database('http') });
      try {
        expect(app.accounts.dialect).toBe('postgres');
        idp.user = { sub: 'pg-http', email: 'pg-http@example.test', email_verified: true, name: 'Pat' };
        const client = new TestClient();
        const { res, hops } = await client.follow(`${app.url}/auth/idp`);
        await res.body?.cancel();
        expect(new URL(hops.at(-1)!.url).pathname).toBe('/dashboard');
        const me = (await (await client.fetch(`${app.url}/auth/me`)).json()) as { user: { email: string; tier: string } };
        expect(me.user).toMatchObject({ email: 'pg-http@example.test', tier: 'free' });
        const created = await client.fetch(`${app.url}/auth/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"pg"}' });
        expect(created.status).toBe(201);
        const key = (await created.json()) as { id: string; key: string };
        expect((await fetch(`${app.url}/v1/echo`, { headers: { 'x-api-key': key.key } })).status).toBe(200);
        const listed = (await (await client.fetch(`${app.url}/auth/keys`)).json()) as { keys: { name: string }[] };
        expect(listed.keys.map((k) => k.name)).toEqual(['Default key', 'pg']);
        expect((await client.fetch(`${app.url}/auth/keys/${key.id}`, { method: 'DELETE' })).status).toBe(200);
        const refused = await fetch(`${app.url}/v1/echo`, { headers: { 'x-api-key': key.key } });
        expect(refused.status).toBe(401);
        expect(((await refused.json()) as { code: string }).code).toBe('INVALID_API_KEY');
      } finally {
        await app.stop();
      }
    }, 30_000);
  });

  describe('the real server', () => {
    test('IPINTEL_DB=postgres://… opens PostgreSQL; a key works on a lookup and is refused right after its revocation', async () => {
      const server = await startTestServer({ IPINTEL_DB: await pg.database('real_server') });
      try {
        expect(server.services.accounts.dialect).toBe('postgres');
        const { created } = await server.services.accounts.grantKeyByEmail('real@example.test', 'pro', 'lookup');
        const ok = await fetch(`${server.url}/v1/ip/8.8.8.8`, { headers: { 'x-api-key': created.secret } });
        expect(ok.status).toBe(200);
        await ok.body?.cancel();
        await server.services.accounts.revokeKey(created.key.id);
        const refused = await fetch(`${server.url}/v1/ip/8.8.8.8`, { headers: { 'x-api-key': created.secret } });
        expect(refused.status).toBe(401);
        await refused.body?.cancel();
      } finally {
        await server.stop();
      }
    }, 120_000);
  });

  describe('keys script with IPINTEL_DB=postgres://…', () => {
    keysScriptBehaviour(() => keysUrl);
  });
});
