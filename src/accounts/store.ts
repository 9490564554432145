/**
 * AccountStore: the one service the HTTP routes, the app's key resolver
 * and the keys script share, over SQLite or PostgreSQL (backend.ts). The
 * database is touched only off the hot path: key resolution reads an
 * in-memory cache, usage is counted in memory and flushed in batches, each
 * key's counts in one transaction (usage-flush.ts). Methods that reach the database are async because
 * PostgreSQL is a network round trip; the two hot-path methods stay sync.
 */
import type { AccountRows, AccountsBackend } from './backend.ts';
import { KeyCache, type ResolvedKey } from './key-cache.ts';
import { parseDbLocation, redactDbLocation } from './location.ts';
import { DEFAULT_MIGRATIONS_ROOT, migrationsFolder } from './migrations.ts';
import { newKey, newSession, newUser } from './records.ts';
import { hashSecret, isApiKeyShaped } from './secrets.ts';
import { FirstKeyReveals, type HeldSecret, type RevealChange } from './first-key-reveal.ts';
import { KeySync } from './key-sync.ts';
import { Serial } from './serial.ts';
import { openSqliteBackend } from './sqlite/backend.ts';
import type { CreatedKey, KeyRecord, KeyTier, ProviderProfile, SessionRecord, SignInResult, UserRecord } from './types.ts';
import { DAY_MS, UsageCounter, dayOf } from './usage-counter.ts';
import { buildUsageReport, usageCounts, type UsageReport } from './usage-report.ts';
import { writeUsageInChunks } from './usage-flush.ts';
import { tierRank } from './validation.ts';

export type { ResolvedKey } from './key-cache.ts';

/** A user already holds the most active keys allowed; nothing was written. */
export class KeyCapReached extends Error {
  constructor(readonly limit: number) {
    super(`at most ${limit} active keys per account`);
    this.name = 'KeyCapReached';
  }
}

export interface AccountsOptions {
  /** Clock (tests move it). */
  now?: () => number;
  /** How often pending usage is written; a crash loses at most this much usage. Default 5 s; 0 disables the timer. */
  flushIntervalMs?: number;
  /** How often to look for key writes by other processes (the keys script, other servers) and apply them to the cache. Default 1 s; 0 disables. */
  syncIntervalMs?: number;
  /**
   * Also sync as soon as the database reports a key write by another
   * process (PostgreSQL LISTEN/NOTIFY; SQLite has no such thing and only
   * polls). Default: on whenever syncing is (syncIntervalMs > 0).
   */
  keyChangeNotifications?: boolean;
  /** Session lifetime since last rotation. Default 30 days. */
  sessionTtlMs?: number;
  /** Age after which a session id is replaced by a new one. Default 24 h. */
  sessionRotateMs?: number;
  /** How long per-minute usage rows are kept. Default 48 h. */
  minuteRetentionMs?: number;
  /**
   * Called after a revocation commits, awaited before revokeKey returns: the
   * other worker threads of a host (src/host/workers/) drop the key from their
   * caches there, so revocation is immediate on every worker, not at their
   * next sync.
   */
  onKeyRevoked?: () => Promise<void>;
  /**
   * Called when a first key's secret is held for a session's dashboard view,
   * or forgotten (`held` null): the other worker threads of a host mirror it
   * (mirrorReveal), since that view may reach any of them.
   */
  onRevealChange?: RevealChange;
  /** Folder holding drizzle/sqlite and drizzle/postgres (default the repository's drizzle/; a compiled binary passes its embedded copy). */
  migrationsRoot?: string;
  /**
   * The host has applied the migrations to this database already (a pool's
   * worker opens the file the primary migrated): open it without reading
   * them, or loading the migrator. Default false.
   */
  migrated?: boolean;
}

/** Default name of the key made at first sign-in. */
export const FIRST_KEY_NAME = 'Default key';
/** How long a rotated-out session id keeps working, for requests already in flight. */
const ROTATION_GRACE_MS = 60_000;

/**
 * Opens the accounts database named by IPINTEL_DB: a SQLite file path
 * (`:memory:` for tests) or a `postgres://` / `postgresql://` URL. Applies
 * the migrations and loads the key cache.
 */
export async function openAccounts(location: string, options: AccountsOptions = {}): Promise<AccountStore> {
  const loc = parseDbLocation(location);
  const root = options.migrationsRoot ?? DEFAULT_MIGRATIONS_ROOT;
  let backend: AccountsBackend;
  try {
    backend =
      loc.dialect === 'postgres'
        ? // Loaded only when used: the PostgreSQL driver and schema add to every start-up otherwise.
          await (await import('./postgres/backend.ts')).openPostgresBackend(loc.url, options.migrated ? null : migrationsFolder(root, 'postgres'))
        : await openSqliteBackend(loc.path, options.migrated ? null : migrationsFolder(root, 'sqlite'));
  } catch (err) {
    // The URL may carry a password: name the database without it.
    throw new Error(`accounts database ${redactDbLocation(location)}: ${(err as Error).message}`, { cause: err });
  }
  try {
    return await AccountStore.start(backend, options);
  } catch (err) {
    await backend.close();
    throw err;
  }
}

/** Accounts, keys, sessions and usage over one database. */
export class AccountStore {
  private readonly now: () => number;
  private readonly onKeyRevoked: (() => Promise<void>) | undefined;
  private readonly cache = new KeyCache();
  private readonly keySync: KeySync;
  private readonly reveals: FirstKeyReveals;
  private readonly usage = new UsageCounter();
  /** Flushes and usage reports take turns, so a report never counts a batch both in memory and in the database. */
  private readonly usageTurns = new Serial();
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  private readonly sessionTtlMs: number;
  private readonly sessionRotateMs: number;
  private readonly minuteRetentionMs: number;
  private lastPruneAt = 0;
  private closed = false;
  private timerFlushRunning = false;
  private stopWatching: (() => Promise<void>) | null = null;

  /** Loads the key cache from `backend`, subscribes to key change notifications where the database has them, and starts the flush and sync timers. */
  static async start(backend: AccountsBackend, options: AccountsOptions = {}): Promise<AccountStore> {
    const store = new AccountStore(backend, options);
    await store.keySync.load();
    const syncing = (options.syncIntervalMs ?? 1_000) > 0;
    if ((options.keyChangeNotifications ?? syncing) && backend.watchKeyChanges) {
      // Writes committed since loadKeys are caught by the sync that the
      // first subscription triggers.
      store.stopWatching = await backend.watchKeyChanges(() => store.keySync.request(true));
    }
    // Last, so a failure above leaves no timer running on a closed database.
    store.startTimers(options);
    return store;
  }

  private constructor(
    private readonly backend: AccountsBackend,
    options: AccountsOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.onKeyRevoked = options.onKeyRevoked;
    this.keySync = new KeySync(backend, this.cache, () => this.closed);
    this.reveals = new FirstKeyReveals(this.now, options.onRevealChange);
    this.sessionTtlMs = options.sessionTtlMs ?? 30 * DAY_MS;
    this.sessionRotateMs = options.sessionRotateMs ?? DAY_MS;
    this.minuteRetentionMs = options.minuteRetentionMs ?? 2 * DAY_MS;
  }

  /** Which database engine holds the accounts. */
  get dialect(): 'sqlite' | 'postgres' {
    return this.backend.dialect;
  }

  // ---- hot path -------------------------------------------------------

  /** Resolves an `X-API-Key` value from memory only: the key's id, owner and tier, or null when not cached (unknown, revoked, or not yet synced). */
  resolveApiKey(rawKey: string): ResolvedKey | null {
    // Equality is a Map lookup on the SHA-256, not on the secret: timing can
    // at most reveal hash prefixes, which do not help forge a key.
    if (!isApiKeyShaped(rawKey)) return null;
    return this.cache.get(hashSecret(rawKey));
  }

  /**
   * Resolves an `X-API-Key` value as the server must: from memory, and on a
   * miss from the database, so a key made by another process (`keys create`)
   * works the moment that process returns. Synchronous on a hit. Misses
   * share syncs (syncForMiss), so unknown keys cost at most one change
   * counter read at a time, however many arrive; nothing is cached about an
   * unknown key, so no stale "not found" can outlive its creation.
   */
  resolveApiKeyNow(rawKey: string): ResolvedKey | null | Promise<ResolvedKey | null> {
    const hit = this.resolveApiKey(rawKey);
    if (hit !== null || this.closed || !isApiKeyShaped(rawKey)) return hit;
    return this.keySync.forMiss().then(() => this.resolveApiKey(rawKey));
  }

  /** Counts one request made with a key (memory only; written at the next flush). */
  recordUsage(keyId: string, at: number = this.now()): void {
    this.usage.record(keyId, at);
  }

  // ---- users ----------------------------------------------------------

  /** A user by id, or null. */
  getUser(userId: string): Promise<UserRecord | null> {
    return this.backend.read((rows) => rows.userById(userId));
  }

  /** A user by (normalised) email, or null. */
  findUserByEmail(email: string): Promise<UserRecord | null> {
    return this.backend.read((rows) => rows.userByEmail(email));
  }

  /** Provider identities linked to a user. */
  identitiesOf(userId: string): Promise<{ provider: string; email: string | null; createdAt: number }[]> {
    return this.backend.read((rows) => rows.identitiesOf(userId));
  }

  /**
   * Operator path (keys script): the user with this email (created when
   * missing), raised to `tier`, and a new key of `tier` — in one transaction.
   */
  async grantKeyByEmail(email: string, tier: KeyTier, name: string): Promise<{ user: UserRecord; created: CreatedKey; newUser: boolean }> {
    const now = this.now();
    const result = await this.backend.transaction(async (rows) => {
      const existing = await rows.userByEmail(email);
      let user = existing ?? newUser({ email, name: null, tier }, now);
      if (!existing) await rows.insertUser(user);
      else if (tierRank(tier) > tierRank(user.tier)) {
        // Tiers only go up: an operator's free key never demotes a pro account.
        await rows.setUserTier(user.id, tier);
        user = { ...user, tier };
      }
      const created = newKey(user.id, name, tier, now);
      await rows.insertKey(created.key, created.secretHash);
      return { user, created, newUser: existing === null };
    });
    this.cache.add(result.created.secretHash, { keyId: result.created.key.id, userId: result.user.id, tier });
    return { user: result.user, created: stripHash(result.created), newUser: result.newUser };
  }

  /**
   * OAuth sign-in: finds the user of a provider identity, or links it to the
   * user with the same verified email, or creates a user. A user without an
   * active key gets a free one (returned once as `firstKey`).
   */
  async signIn(profile: ProviderProfile): Promise<SignInResult> {
    const now = this.now();
    const result = await this.backend.transaction(async (rows) => {
      const known = await rows.userByIdentity(profile.provider, profile.subject);
      if (known) return { user: known, newUser: false, firstKey: null };
      const byEmail = profile.email && profile.emailVerified ? await rows.userByEmail(profile.email) : null;
      // An unverified address must not claim a row's email (it could be someone else's).
      const email = profile.email && profile.emailVerified && !byEmail ? profile.email : null;
      const user = byEmail ?? newUser({ email, name: profile.name, tier: 'free' }, now);
      if (!byEmail) await rows.insertUser(user);
      await rows.insertIdentity(user.id, profile, now);
      const firstKey = (await rows.hasActiveKey(user.id)) ? null : newKey(user.id, FIRST_KEY_NAME, user.tier, now);
      if (firstKey) await rows.insertKey(firstKey.key, firstKey.secretHash);
      return { user, newUser: byEmail === null, firstKey };
    });
    if (result.firstKey) {
      this.cache.add(result.firstKey.secretHash, { keyId: result.firstKey.key.id, userId: result.user.id, tier: result.firstKey.key.tier });
    }
    return { user: result.user, newUser: result.newUser, firstKey: result.firstKey ? stripHash(result.firstKey) : null };
  }

  // ---- keys -----------------------------------------------------------

  /**
   * Creates a key for a user (the caller checks the tier is allowed); the
   * secret is in the result only. With `maxActive`, the user's active keys
   * are counted and the key inserted in one locked transaction, so
   * concurrent creates on any worker or server never pass the cap
   * (KeyCapReached).
   */
  async createKey(userId: string, name: string, tier: KeyTier, maxActive?: number): Promise<CreatedKey> {
    const created = newKey(userId, name, tier, this.now());
    await this.backend.transaction(async (rows) => {
      if (maxActive !== undefined && (await rows.lockedActiveKeyCount(userId)) >= maxActive) throw new KeyCapReached(maxActive);
      await rows.insertKey(created.key, created.secretHash);
    });
    this.cache.add(created.secretHash, { keyId: created.key.id, userId, tier });
    return stripHash(created);
  }

  /** A user's keys (revoked included), with last-use times not yet flushed merged in. */
  async listKeys(userId: string): Promise<KeyRecord[]> {
    const keys = await this.backend.read((rows) => rows.keysOfUser(userId));
    return keys.map((k) => this.withPendingLastUse(k));
  }

  /** One key by id, or null. */
  async getKey(keyId: string): Promise<KeyRecord | null> {
    const k = await this.backend.read((rows) => rows.keyById(keyId));
    return k ? this.withPendingLastUse(k) : null;
  }

  /**
   * Revokes a key at once: the row is written first and the cache entry
   * dropped after commit, so a failed write never leaves the two disagreeing.
   * With `ownerId`, another user's key is reported as absent. Returns the
   * key, or null when not found.
   */
  async revokeKey(keyId: string, ownerId?: string): Promise<KeyRecord | null> {
    const key = await this.backend.transaction(async (rows) => {
      const k = await rows.keyById(keyId);
      if (!k || (ownerId !== undefined && k.userId !== ownerId)) return null;
      if (k.revokedAt === null) await rows.markRevoked(keyId, this.now());
      return rows.keyById(keyId);
    });
    if (key) {
      this.cache.removeById(keyId);
      await this.onKeyRevoked?.();
    }
    return key;
  }

  // ---- sessions -------------------------------------------------------

  /** Starts a session for a user; returns the cookie token (never stored) and its expiry. */
  async createSession(userId: string): Promise<{ token: string; expiresAt: number }> {
    const { token, row } = newSession(userId, this.now(), this.sessionTtlMs);
    await this.backend.transaction((rows) => rows.insertSession(row));
    return { token, expiresAt: row.expiresAt };
  }

  /** The session of a cookie token, rotating its id when old enough; null when unknown or expired. */
  async validateSession(token: string): Promise<SessionRecord | null> {
    if (token.length === 0 || token.length > 128) return null;
    const now = this.now();
    const idHash = hashSecret(token);
    return this.backend.transaction(async (rows) => {
      const row = await rows.sessionByHash(idHash);
      if (!row) return null;
      if (row.expiresAt <= now) {
        await rows.deleteSessionByHash(row.idHash);
        return null;
      }
      const user = await rows.userById(row.userId);
      if (!user) return null;
      if (now - row.rotatedAt < this.sessionRotateMs) return { user, expiresAt: row.expiresAt, rotated: null };
      const next = newSession(row.userId, now, this.sessionTtlMs, row.createdAt);
      await rows.insertSession(next.row);
      await rows.retireSession(row, now, ROTATION_GRACE_MS);
      return { user, expiresAt: next.row.expiresAt, rotated: { token: next.token, expiresAt: next.row.expiresAt } };
    });
  }

  /** Ends the session of a cookie token (no-op when unknown). */
  async deleteSession(token: string): Promise<void> {
    const idHash = hashSecret(token);
    this.reveals.forgetSession(idHash);
    await this.backend.transaction((rows) => rows.deleteSessionByHash(idHash));
  }

  /** Keeps a first key's secret in memory only (never on disk) until the session's next dashboard view; resolves once every worker holds it. */
  holdKeyForReveal(sessionToken: string, secret: string): Promise<void> {
    return this.reveals.hold(sessionToken, secret);
  }

  /** Applies a reveal held or forgotten by another worker thread of this host (see onRevealChange). */
  mirrorReveal(sessionHash: string, held: HeldSecret | null): void {
    this.reveals.mirror(sessionHash, held);
  }

  /** Takes (and forgets, on every worker before resolving) the secret held for a session: shown once. */
  takeKeyForReveal(sessionToken: string): Promise<string | null> {
    return this.reveals.take(sessionToken);
  }

  // ---- usage ----------------------------------------------------------

  /** Requests per key of a user over the last hour / day / 30 days, unflushed counts included. */
  usageReport(userId: string): Promise<UsageReport> {
    return this.usageTurns.run(async () => {
      const now = this.now();
      const keys = await this.listKeys(userId);
      const ids = keys.map((k) => k.id);
      const [minuteList, dayList] = await this.backend.read((rows) =>
        Promise.all([rows.minuteRows(ids, now - DAY_MS - 3_600_000), rows.dayRows(ids, dayOf(now) - 30 * DAY_MS)]),
      );
      const { minutes, days } = usageCounts(minuteList, dayList, ids, (id) => this.usage.pendingOf(id));
      return buildUsageReport(keys, minutes, days, now);
    });
  }

  /** Writes pending usage, a few keys per transaction (usage-flush.ts); on failure the unwritten counts are kept for the next try. */
  flush(): Promise<void> {
    return this.usageTurns.run(() => this.flushNow());
  }

  /** Applies keys created or revoked by other processes (the keys script, other servers) to the cache. */
  syncKeys(): Promise<void> {
    return this.keySync.sync();
  }

  /** Flushes pending usage, stops timers and closes the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    for (const t of this.timers) clearInterval(t);
    this.reveals.clear();
    try {
      await this.stopWatching?.();
    } catch (err) {
      console.error(`accounts: could not stop listening for key changes: ${(err as Error).message}`);
    }
    try {
      await this.flush();
    } finally {
      this.closed = true;
      // Let a sync already under way finish before its connection goes.
      await this.keySync.settled();
      await this.backend.close();
    }
  }

  private async flushNow(): Promise<void> {
    if (this.closed) return;
    const now = this.now();
    const prune = now - this.lastPruneAt > 3_600_000;
    if (this.usage.isEmpty() && !prune) return;
    const pruning = async (rows: AccountRows) => {
      await rows.pruneMinutes(now - this.minuteRetentionMs);
      await rows.purgeExpiredSessions(now);
    };
    // In transactions of a few keys each, the event loop turning between them (usage-flush.ts).
    await writeUsageInChunks(this.backend, this.usage.drain(), this.usage, prune ? pruning : null);
    if (prune) this.lastPruneAt = now;
  }

  private startTimers(options: AccountsOptions): void {
    const flushMs = options.flushIntervalMs ?? 5_000;
    const syncMs = options.syncIntervalMs ?? 1_000;
    if (flushMs > 0) this.timers.push(setInterval(() => void this.flushQuietly(), flushMs));
    if (syncMs > 0) this.timers.push(setInterval(() => this.keySync.request(false), syncMs));
    // Timers must not keep a finished process (the keys script, tests) alive.
    for (const t of this.timers) (t as { unref?: () => void }).unref?.();
  }

  private withPendingLastUse(k: KeyRecord): KeyRecord {
    const pending = this.usage.pendingLastUsed(k.id);
    return pending !== null && pending > (k.lastUsedAt ?? 0) ? { ...k, lastUsedAt: pending } : k;
  }

  private async flushQuietly(): Promise<void> {
    // A tick that finds the previous flush still waiting (a database that is
    // slow or down) skips, rather than queueing flush after flush behind it.
    if (this.timerFlushRunning) return;
    this.timerFlushRunning = true;
    try {
      await this.flush();
    } catch (err) {
      // Counts stay in memory and are retried; the message names no secret.
      console.error(`accounts: usage flush failed: ${(err as Error).message}`);
    } finally {
      this.timerFlushRunning = false;
    }
  }
}

/** Drops the hash from an internal created-key record. */
function stripHash(c: CreatedKey & { secretHash: string }): CreatedKey {
  return { key: c.key, secret: c.secret };
}
