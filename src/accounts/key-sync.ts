/**
 * Keeps a KeyCache current with the database: every active key at start,
 * then the keys changed since the last change counter seen — on a timer, on
 * a database notification, and for a cache miss (a key another process made
 * a moment ago). Syncs never overlap.
 */
import type { AccountsBackend } from './backend.ts';
import type { KeyCache } from './key-cache.ts';
import { Serial } from './serial.ts';

/** The sync machinery of one AccountStore's key cache. */
export class KeySync {
  private readonly turns = new Serial();
  /** The sync queued for cache misses, until it starts: misses arriving before then share it. */
  private missSync: Promise<void> | null = null;
  /** The last miss sync failed (logged once per run of failures, not once per request). */
  private missSyncFailing = false;
  /** The key change counter up to which the cache is known to be current. */
  private seenKeySeq = 0;
  private running = false;
  /** A notification came while a sync was running: that sync may have read the counter too early, so run another. */
  private again = false;

  constructor(
    private readonly backend: AccountsBackend,
    private readonly cache: KeyCache,
    private readonly isClosed: () => boolean,
  ) {}

  /** Fills the cache with every active key; the counter is read first so no later change is skipped. */
  async load(): Promise<void> {
    const seq = await this.backend.read((rows) => rows.keyChangeSeq());
    this.cache.replaceAll(await this.backend.read((rows) => rows.activeKeyHashes()));
    this.seenKeySeq = seq;
  }

  /** Applies keys created or revoked by other processes since the last sync. */
  sync(): Promise<void> {
    return this.turns.run(() => this.syncNow());
  }

  /** Resolves once a sync already under way has finished (before the database closes). */
  settled(): Promise<void> {
    return this.turns.run(async () => {});
  }

  /**
   * A sync that reads the change counter after this call, for a cache miss.
   * A sync already reading may have read the counter before the key's commit,
   * so the miss waits for the next one, which every miss until it starts shares.
   * Never rejects: a failing database answers the miss as unknown.
   */
  forMiss(): Promise<void> {
    if (this.missSync !== null) return this.missSync;
    const sync: Promise<void> = this.turns
      .run(() => {
        // From here on the counter may be read before a newer commit: later misses need a later sync.
        if (this.missSync === sync) this.missSync = null;
        return this.syncNow();
      })
      .then(
        () => {
          this.missSyncFailing = false;
        },
        (err: unknown) => {
          if (!this.missSyncFailing) console.error(`accounts: key lookup for a cache miss failed: ${(err as Error).message}`);
          this.missSyncFailing = true;
        },
      );
    this.missSync = sync;
    return sync;
  }

  /**
   * Starts a sync unless one is running. A timer tick then skips (the next
   * tick comes soon); a notification instead asks for one more sync after
   * the running one, which may have read the counter before that write.
   */
  request(notified: boolean): void {
    if (this.isClosed()) return;
    if (this.running) {
      if (notified) this.again = true;
      return;
    }
    this.running = true;
    void (async () => {
      try {
        do {
          this.again = false;
          try {
            await this.sync();
          } catch (err) {
            console.error(`accounts: key cache sync failed: ${(err as Error).message}`);
          }
        } while (this.again && !this.isClosed());
      } finally {
        this.running = false;
      }
    })();
  }

  /** One sync step; run only inside `turns`. */
  private async syncNow(): Promise<void> {
    if (this.isClosed()) return;
    // Counter first, rows second: every write numbered up to `seq` has
    // committed, so the rows read next include all of them.
    const seq = await this.backend.read((rows) => rows.keyChangeSeq());
    if (seq === this.seenKeySeq) return;
    const changed = await this.backend.read((rows) => rows.keysChangedSince(this.seenKeySeq));
    this.cache.apply(changed);
    this.seenKeySeq = seq;
  }
}
