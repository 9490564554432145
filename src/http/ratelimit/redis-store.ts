/**
 * Buckets shared through Redis: one EVALSHA of the token-bucket script per
 * request (atomic, so concurrent requests from any number of processes can
 * never take more tokens than the bucket holds). Uses Bun's built-in client.
 * Errors and timeouts reject; the limiter decides what to do about them.
 */
import { RedisClient } from 'bun';
import { describe, EPSILON_MS, limitOf, WINDOW_MS, type RateDecision } from './gcra.ts';
import { TOKEN_BUCKET_LUA } from './redis-script.ts';
import type { Tier } from '../../tiers.ts';

/** Prefix of every bucket key in Redis, so the limiter can share a database. */
export const REDIS_KEY_PREFIX = 'ipintel:rl:';

/**
 * Default bound on one Redis round trip before the request is answered
 * locally. Far above a healthy round trip (well under 1 ms), yet not so tight
 * that a busy event loop makes a healthy Redis look dead; once Redis is found
 * down only one probe a second waits this long.
 */
export const DEFAULT_REDIS_TIMEOUT_MS = 500;

/**
 * Bound on establishing a connection. Generous on purpose: the timer also
 * runs while start-up work blocks the event loop, and a short one would call
 * a healthy Redis dead. Requests never wait for it: they are bounded by the
 * round-trip timeout and reconnects happen in the background.
 */
const CONNECT_TIMEOUT_MS = 5_000;

const SCRIPT_SHA = new Bun.CryptoHasher('sha1').update(TOKEN_BUCKET_LUA).digest('hex');
const WINDOW_ARG = String(WINDOW_MS);
const EPSILON_ARG = String(EPSILON_MS);

/** Token buckets stored in Redis. */
export class RedisBuckets {
  private readonly client: RedisClient;
  /** The connection attempt under way, if any. */
  private connecting: Promise<void> | null = null;

  constructor(
    url: string,
    private readonly timeoutMs: number = DEFAULT_REDIS_TIMEOUT_MS,
  ) {
    // No offline queue and no automatic reconnect: run() decides when to
    // connect, and no command queues up behind a dead connection.
    this.client = new RedisClient(url, {
      enableOfflineQueue: false,
      connectionTimeout: CONNECT_TIMEOUT_MS,
      autoReconnect: false,
    });
    this.startConnect().catch(() => {}); // a failure is met by the first request, which tries again
  }

  /** Takes one token from `key`'s bucket; `now` is the caller's clock in ms (used floored), or null to use Redis's TIME. */
  async consume(key: string, tier: Tier, now: number | null): Promise<RateDecision> {
    const limit = limitOf(tier);
    const reply = await this.withTimeout(this.run(key, limit, now));
    if (!Array.isArray(reply) || reply.length !== 3) throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
    const tat = Number(reply[1]);
    const at = Number(reply[2]);
    return describe(reply[0] === 1, tat, at, limit, tier);
  }

  /** Closes the connection. */
  close(): void {
    this.client.close();
  }

  private async run(key: string, limit: number, now: number | null): Promise<unknown> {
    // Connect on demand, one attempt at a time. Requests wait for it, bounded by
    // the round-trip timeout; while Redis is down a refused connection fails at
    // once, and the limiter keeps most requests local between probes anyway.
    if (!this.client.connected) await (this.connecting ?? this.startConnect());
    const args = ['1', REDIS_KEY_PREFIX + key, String(WINDOW_MS / limit), WINDOW_ARG, EPSILON_ARG, now === null ? '' : String(Math.floor(now))];
    try {
      return await this.client.send('EVALSHA', [SCRIPT_SHA, ...args]);
    } catch (err) {
      // After a Redis restart (or on first use) the script cache is empty: EVAL loads it.
      if (!String((err as Error)?.message).includes('NOSCRIPT')) throw err;
      return await this.client.send('EVAL', [TOKEN_BUCKET_LUA, ...args]);
    }
  }

  /** Starts a connect attempt and records it as the one under way until it settles. */
  private startConnect(): Promise<void> {
    const attempt = this.client.connect().finally(() => {
      this.connecting = null;
    });
    this.connecting = attempt;
    return attempt;
  }

  private withTimeout<T>(p: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`rate-limit store did not answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }
}
