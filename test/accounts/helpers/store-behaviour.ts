/**
 * The AccountStore's behaviour, run against each backend (store.test.ts on
 * a SQLite file, postgres.test.ts on a real PostgreSQL): users and
 * identities, sessions, key create/list/revoke with the immediate refusal,
 * another process's writes picked up, tier resolution and usage flushing.
 * Every test uses its own emails and subjects, so they share one database.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import type { AccountsBackend } from '../../../src/accounts/backend.ts';
import type { AccountStore, AccountsOptions } from '../../../src/accounts/store.ts';
import { generateApiKey } from '../../../src/accounts/secrets.ts';

export interface StoreFixture {
  /** Opens a store on the fixture's database: a second call is, to the database, another server process. */
  open(options?: AccountsOptions): Promise<AccountStore>;
  /** What the database holds for one key: summed minute and day counts, and the number of minute rows. */
  storedUsage(keyId: string): Promise<{ minutes: number; days: number; minuteRows: number }>;
}

/** Base time of the test clocks (fixed, so windows are exact). */
const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** Registers the behaviour tests; `fixture` is called once the suite's beforeAll has run. */
export function storeBehaviour(fixture: () => StoreFixture): void {
  const opened: AccountStore[] = [];
  let unique = 0;
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });

  /** A store with a hand-moved clock (timers off unless asked for). */
  async function clocked(options: AccountsOptions = {}, clock = { t: T0 }) {
    const store = await fixture().open({ now: () => clock.t, flushIntervalMs: 0, syncIntervalMs: 0, ...options });
    opened.push(store);
    return { store, clock };
  }
  /** A name no other test uses. */
  const fresh = (what: string) => `${what}-${++unique}-${Math.random().toString(36).slice(2, 8)}`;
  const profile = (sub: string, email: string | null, emailVerified = true) => ({ provider: 'oidc', subject: sub, email, emailVerified, name: 'Name' });

  describe('users and identities', () => {
    test('a new identity creates a user, an identity and a free first key; signing in again finds the same user', async () => {
      const { store } = await clocked();
      const email = `${fresh('new')}@example.test`;
      const sub = fresh('sub');
      const first = await store.signIn(profile(sub, email));
      expect(first.newUser).toBe(true);
      expect(first.user).toMatchObject({ email, name: 'Name', tier: 'free', createdAt: T0 });
      expect(first.firstKey?.key.tier).toBe('free');
      expect(await store.getUser(first.user.id)).toEqual(first.user);
      expect(await store.findUserByEmail(email)).toEqual(first.user);
      expect(await store.identitiesOf(first.user.id)).toEqual([{ provider: 'oidc', email, createdAt: T0 }]);
      const again = await store.signIn(profile(sub, email));
      expect(again).toEqual({ user: first.user, newUser: false, firstKey: null });
      expect(await store.listKeys(first.user.id)).toHaveLength(1);
      expect(await store.getUser('no-such-user')).toBeNull();
      expect(await store.findUserByEmail(`${fresh('nobody')}@example.test`)).toBeNull();
    });

    test('an operator-invited pro user is linked by verified email and keeps pro, without an extra key', async () => {
      const { store } = await clocked();
      const email = `${fresh('vip')}@example.test`;
      const invited = await store.grantKeyByEmail(email, 'pro', 'invite');
      expect(invited.newUser).toBe(true);
      const r = await store.signIn(profile(fresh('vip-sub'), email));
      expect(r.user.id).toBe(invited.user.id);
      expect(r.user.tier).toBe('pro');
      expect(r.newUser).toBe(false);
      expect(r.firstKey).toBeNull();
      expect(await store.listKeys(r.user.id)).toHaveLength(1);
      expect((await store.identitiesOf(r.user.id)).map((i) => i.provider)).toEqual(['oidc']);
    });

    test('an unverified email never links to an existing account', async () => {
      const { store } = await clocked();
      const email = `${fresh('victim')}@example.test`;
      const victim = await store.grantKeyByEmail(email, 'pro', 'invite');
      const r = await store.signIn(profile(fresh('attacker'), email, false));
      expect(r.user.id).not.toBe(victim.user.id);
      expect(r.user.tier).toBe('free');
      expect(r.user.email).toBeNull();
      expect(r.firstKey?.key.tier).toBe('free');
    });
  });

  describe('keys and tiers', () => {
    test('the active-key cap holds under concurrent creates (issue 26)', async () => {
      const { store } = await clocked();
      const { user, firstKey } = await store.signIn(profile(fresh('cap'), `${fresh('cap')}@example.test`));
      expect(firstKey).not.toBeNull();
      const cap = 5;
      const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => store.createKey(user.id, `k${i}`, 'free', cap).then(() => 'created', (e: Error) => e.name)));
      expect(outcomes.filter((o) => o === 'created')).toHaveLength(cap - 1);
      expect(outcomes.filter((o) => o !== 'created').every((o) => o === 'KeyCapReached')).toBe(true);
      expect((await store.listKeys(user.id)).filter((k) => k.revokedAt === null)).toHaveLength(cap);
      // A revocation frees a place.
      await store.revokeKey(firstKey!.key.id);
      await store.createKey(user.id, 'after revoke', 'free', cap);
      expect(store.createKey(user.id, 'one too many', 'free', cap)).rejects.toThrow('at most 5');
    });

    test('create, list and revoke: the revoked key is refused at once, listed as revoked, and revoking again is idempotent', async () => {
      const { store, clock } = await clocked();
      const { user, firstKey } = await store.signIn(profile(fresh('k'), `${fresh('k')}@example.test`));
      const second = await store.createKey(user.id, "x'); DROP TABLE api_keys; --", 'free');
      expect(second.secret).toMatch(/^ipi_[A-Za-z0-9_-]{43}$/);
      expect(second.key.prefix).toBe(second.secret.slice(0, 12));
      expect(store.resolveApiKey(second.secret)).toEqual({ keyId: second.key.id, userId: user.id, tier: 'free' });
      expect((await store.listKeys(user.id)).map((k) => k.id)).toEqual([firstKey!.key.id, second.key.id]);
      clock.t += 1000;
      const revoked = await store.revokeKey(second.key.id);
      expect(revoked).toMatchObject({ id: second.key.id, name: "x'); DROP TABLE api_keys; --", revokedAt: T0 + 1000 });
      expect(store.resolveApiKey(second.secret)).toBeNull();
      expect(store.resolveApiKey(firstKey!.secret)).not.toBeNull();
      clock.t += 1000;
      expect((await store.revokeKey(second.key.id))?.revokedAt).toBe(T0 + 1000);
      expect((await store.getKey(second.key.id))?.revokedAt).toBe(T0 + 1000);
      expect(await store.getKey('no-such-key')).toBeNull();
    });

    test('valid, revoked, unknown and malformed keys', async () => {
      const { store } = await clocked();
      const { user, firstKey } = await store.signIn(profile(fresh('k'), `${fresh('k')}@example.test`));
      const secret = firstKey!.secret;
      expect(store.resolveApiKey(secret)).toEqual({ keyId: firstKey!.key.id, userId: user.id, tier: 'free' });
      expect(store.resolveApiKey(secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A'))).toBeNull();
      for (const junk of ['', 'ipi_', 'x'.repeat(10_000), "ipi_' OR 1=1 --", secret + 'x', secret.toUpperCase()]) expect(store.resolveApiKey(junk)).toBeNull();
      await store.revokeKey(firstKey!.key.id);
      expect(store.resolveApiKey(secret)).toBeNull();
    });

    test('revoking with the wrong owner reports not found and leaves the key working', async () => {
      const { store } = await clocked();
      const a = await store.signIn(profile(fresh('a'), `${fresh('a')}@example.test`));
      const b = await store.signIn(profile(fresh('b'), `${fresh('b')}@example.test`));
      expect(await store.revokeKey(a.firstKey!.key.id, b.user.id)).toBeNull();
      expect(store.resolveApiKey(a.firstKey!.secret)).not.toBeNull();
      expect(await store.revokeKey('no-such-id', a.user.id)).toBeNull();
    });

    test('tiers: pro is granted by the operator, a later free grant never lowers it, each key keeps its own tier', async () => {
      const { store } = await clocked();
      const email = `${fresh('tier')}@example.test`;
      const free = await store.grantKeyByEmail(email, 'free', 'first');
      expect(free.user.tier).toBe('free');
      const pro = await store.grantKeyByEmail(email, 'pro', 'upgrade');
      expect(pro.newUser).toBe(false);
      expect(pro.user).toMatchObject({ id: free.user.id, tier: 'pro' });
      const spare = await store.grantKeyByEmail(email, 'free', 'spare');
      expect(spare.user.tier).toBe('pro');
      expect((await store.getUser(free.user.id))?.tier).toBe('pro');
      expect(store.resolveApiKey(free.created.secret)?.tier).toBe('free');
      expect(store.resolveApiKey(pro.created.secret)?.tier).toBe('pro');
      expect(store.resolveApiKey(spare.created.secret)?.tier).toBe('free');
      expect((await store.listKeys(free.user.id)).map((k) => k.tier)).toEqual(['free', 'pro', 'free']);
    });

    test("the hot path (resolve + count) never touches the database", async () => {
      const { store } = await clocked();
      const { firstKey } = await store.signIn(profile(fresh('hot'), `${fresh('hot')}@example.test`));
      const s = store as unknown as { backend: AccountsBackend };
      const real = s.backend;
      const touched: string[] = [];
      s.backend = new Proxy(real, {
        get(_target, prop) {
          touched.push(String(prop));
          throw new Error('database touched on the hot path');
        },
      });
      try {
        for (let i = 0; i < 100; i++) {
          const r = store.resolveApiKey(firstKey!.secret);
          expect(r?.keyId).toBe(firstKey!.key.id);
          store.recordUsage(r!.keyId);
        }
        expect(store.resolveApiKey(generateApiKey())).toBeNull();
      } finally {
        s.backend = real;
      }
      expect(touched).toEqual([]);
      await store.flush();
      expect((await fixture().storedUsage(firstKey!.key.id)).minutes).toBe(100);
    });

    test("another process's create and revoke reach this process's cache at its next sync", async () => {
      const { store: server } = await clocked();
      const { store: script } = await clocked();
      const granted = await script.grantKeyByEmail(`${fresh('x')}@example.test`, 'pro', 'elsewhere');
      expect(script.resolveApiKey(granted.created.secret)?.tier).toBe('pro');
      expect(server.resolveApiKey(granted.created.secret)).toBeNull();
      await server.syncKeys();
      expect(server.resolveApiKey(granted.created.secret)).toEqual({ keyId: granted.created.key.id, userId: granted.user.id, tier: 'pro' });
      await script.revokeKey(granted.created.key.id);
      expect(script.resolveApiKey(granted.created.secret)).toBeNull();
      await server.syncKeys();
      expect(server.resolveApiKey(granted.created.secret)).toBeNull();
      // A key this process revoked stays refused even if a later sync reads an older row.
      const mine = await server.createKey(granted.user.id, 'mine', 'free');
      await server.revokeKey(mine.key.id);
      (server as unknown as { cache: { apply(rows: object[]): void } }).cache.apply([
        { secretHash: 'stale', keyId: mine.key.id, userId: granted.user.id, tier: 'free', revoked: false },
      ]);
      expect(server.resolveApiKey(mine.secret)).toBeNull();
    });

    test("the sync timer applies another process's revocation within a second or two", async () => {
      const { store: server } = await clocked({ syncIntervalMs: 100 });
      const { store: script } = await clocked();
      const granted = await script.grantKeyByEmail(`${fresh('timer')}@example.test`, 'free', 'timer');
      const until = async (want: boolean) => {
        const deadline = Date.now() + 3_000;
        while ((server.resolveApiKey(granted.created.secret) !== null) !== want && Date.now() < deadline) await Bun.sleep(20);
        return server.resolveApiKey(granted.created.secret) !== null;
      };
      expect(await until(true)).toBe(true);
      await script.revokeKey(granted.created.key.id);
      expect(await until(false)).toBe(false);
    });

    test('a reopened database keeps its keys and applies no migration twice', async () => {
      const { store: a } = await clocked();
      const secret = (await a.signIn(profile(fresh('r'), `${fresh('r')}@example.test`))).firstKey!.secret;
      const { store: b } = await clocked();
      expect(b.resolveApiKey(secret)?.tier).toBe('free');
    });
  });

  describe('sessions', () => {
    test('rotation after a day gives a new id; the old one works only for a short grace period', async () => {
      const { store, clock } = await clocked();
      const { user } = await store.signIn(profile(fresh('s'), `${fresh('s')}@example.test`));
      const s = await store.createSession(user.id);
      expect(s.expiresAt).toBe(T0 + 30 * DAY);
      expect((await store.validateSession(s.token))?.rotated).toBeNull();
      clock.t += 25 * HOUR;
      const v = (await store.validateSession(s.token))!;
      expect(v.user.id).toBe(user.id);
      expect(v.rotated).not.toBeNull();
      expect(v.rotated!.token).not.toBe(s.token);
      expect(v.expiresAt).toBe(clock.t + 30 * DAY);
      expect((await store.validateSession(s.token))?.rotated).toBeNull(); // in-flight request within grace
      clock.t += 61_000;
      expect(await store.validateSession(s.token)).toBeNull();
      expect((await store.validateSession(v.rotated!.token))?.user.id).toBe(user.id);
    });

    test('sessions expire; logout deletes; junk tokens are refused', async () => {
      const { store, clock } = await clocked({ sessionTtlMs: 10_000, sessionRotateMs: 1e12 });
      const { user } = await store.signIn(profile(fresh('e'), `${fresh('e')}@example.test`));
      const a = await store.createSession(user.id);
      const b = await store.createSession(user.id);
      await store.deleteSession(b.token);
      expect(await store.validateSession(b.token)).toBeNull();
      expect(await store.validateSession(a.token)).not.toBeNull();
      clock.t += 10_001;
      expect(await store.validateSession(a.token)).toBeNull();
      for (const junk of ['', 'x'.repeat(500), "' OR 1=1 --"]) expect(await store.validateSession(junk)).toBeNull();
      await store.deleteSession('never-issued');
    });

    test('a first key waits in memory for one showing only', async () => {
      const { store, clock } = await clocked();
      const { user } = await store.signIn(profile(fresh('r'), `${fresh('r')}@example.test`));
      const s = await store.createSession(user.id);
      await store.holdKeyForReveal(s.token, 'ipi_secret');
      expect(await store.takeKeyForReveal(s.token)).toBe('ipi_secret');
      expect(await store.takeKeyForReveal(s.token)).toBeNull();
      await store.holdKeyForReveal(s.token, 'ipi_late');
      clock.t += 11 * 60_000;
      expect(await store.takeKeyForReveal(s.token)).toBeNull();
    });
  });

  describe('usage', () => {
    test('counts stay in memory until a flush writes them in one go; reports include unflushed counts; close flushes', async () => {
      const { store, clock } = await clocked();
      const { user, firstKey } = await store.signIn(profile(fresh('u'), `${fresh('u')}@example.test`));
      const id = firstKey!.key.id;
      for (let i = 0; i < 5; i++) store.recordUsage(id);
      clock.t += 60_000;
      for (let i = 0; i < 3; i++) store.recordUsage(id);
      expect(await fixture().storedUsage(id)).toEqual({ minutes: 0, days: 0, minuteRows: 0 });
      expect((await store.usageReport(user.id)).totals.last_hour).toBe(8);
      expect((await store.listKeys(user.id))[0]!.lastUsedAt).toBe(clock.t);
      await store.flush();
      expect(await fixture().storedUsage(id)).toEqual({ minutes: 8, days: 8, minuteRows: 2 });
      expect((await store.usageReport(user.id)).totals).toEqual({ last_hour: 8, last_24h: 8, last_30d: 8 });
      expect((await store.listKeys(user.id))[0]!.lastUsedAt).toBe(clock.t);
      store.recordUsage(id);
      await store.close(); // close flushes
      expect(await fixture().storedUsage(id)).toEqual({ minutes: 9, days: 9, minuteRows: 2 });
    });

    test('windows: old minutes fall out of the hour but stay in the day and month', async () => {
      const { store, clock } = await clocked();
      const { user, firstKey } = await store.signIn(profile(fresh('w'), `${fresh('w')}@example.test`));
      store.recordUsage(firstKey!.key.id, clock.t - 3 * HOUR);
      store.recordUsage(firstKey!.key.id, clock.t - 3 * DAY);
      store.recordUsage(firstKey!.key.id);
      await store.flush();
      expect((await store.usageReport(user.id)).totals).toEqual({ last_hour: 1, last_24h: 2, last_30d: 3 });
    });

    test('two processes counting the same key add up instead of overwriting each other', async () => {
      const clock = { t: T0 };
      const { store: a } = await clocked({}, clock);
      const { store: b } = await clocked({}, clock);
      const { user, created } = await a.grantKeyByEmail(`${fresh('two')}@example.test`, 'free', 'shared');
      for (let i = 0; i < 3; i++) a.recordUsage(created.key.id);
      for (let i = 0; i < 4; i++) b.recordUsage(created.key.id);
      await a.flush();
      await b.flush();
      expect(await fixture().storedUsage(created.key.id)).toEqual({ minutes: 7, days: 7, minuteRows: 1 });
      expect((await a.usageReport(user.id)).totals.last_hour).toBe(7);
    });

    test('a report taken while a flush runs counts every request exactly once', async () => {
      const { store } = await clocked();
      const { user, firstKey } = await store.signIn(profile(fresh('race'), `${fresh('race')}@example.test`));
      for (let round = 1; round <= 5; round++) {
        for (let i = 0; i < 10; i++) store.recordUsage(firstKey!.key.id);
        const [, report] = await Promise.all([store.flush(), store.usageReport(user.id)]);
        expect(report.totals.last_hour).toBe(round * 10);
      }
    });
  });
}
