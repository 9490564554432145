import { describe as group, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { createRateLimiter, createRateLimiterFromConfig } from '../../src/http/ratelimit/limiter.ts';
import { step, describe, WINDOW_MS, type RateDecision } from '../../src/http/ratelimit/gcra.ts';
import { limiterMetrics } from '../../src/http/ratelimit/limiter-metrics.ts';
import { TIERS, type Tier } from '../../src/tiers.ts';

/** A clock the test moves by hand (Unix ms). */
function manualClock(start = Date.UTC(2026, 0, 1, 12, 0, 0)) {
  const c = { t: start, now: () => c.t };
  return c;
}

function sync(d: RateDecision | Promise<RateDecision>): RateDecision {
  if (d instanceof Promise) throw new Error('memory limiter must decide synchronously');
  return d;
}

group('exactness per tier', () => {
  for (const tier of ['anonymous', 'free', 'pro'] as Tier[]) {
    const cap = TIERS[tier].requestsPerMinute;
    test(`${tier}: ${cap} admitted in one instant, request ${cap + 1} refused`, () => {
      const clock = manualClock();
      const limiter = createRateLimiter({ now: clock.now });
      for (let i = 1; i <= cap; i++) {
        const d = sync(limiter.consume('k', tier));
        expect(d.allowed).toBe(true);
        expect(d.remaining).toBe(cap - i);
        expect(d.limit).toBe(cap);
        expect(d.tier).toBe(tier);
        // Full again i emission intervals from now.
        expect(d.resetAt).toBe(Math.ceil((clock.t + (i * WINDOW_MS) / cap) / 1000));
      }
      const refused = sync(limiter.consume('k', tier));
      expect(refused).toEqual({
        allowed: false,
        limit: cap,
        remaining: 0,
        resetAt: Math.ceil((clock.t + WINDOW_MS) / 1000),
        retryAfter: Math.ceil(WINDOW_MS / cap / 1000),
        tier,
      });
    });
  }

  test('61 anonymous requests at 10 ms intervals (less than one refill): the 61st is refused', () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ now: clock.now });
    const allowed: boolean[] = [];
    for (let i = 0; i < 61; i++) {
      allowed.push(sync(limiter.consume('ip:192.0.2.1', 'anonymous')).allowed);
      clock.t += 10;
    }
    expect(allowed.slice(0, 60).every(Boolean)).toBe(true);
    expect(allowed[60]).toBe(false);
  });
});

group('refill (injected clock)', () => {
  test('an exhausted anonymous bucket gains one request per second, and is full 60 s after the last admission', () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ now: clock.now });
    for (let i = 0; i < 60; i++) sync(limiter.consume('a', 'anonymous'));
    const start = clock.t;
    expect(sync(limiter.consume('a', 'anonymous')).allowed).toBe(false);
    clock.t = start + 999;
    expect(sync(limiter.consume('a', 'anonymous')).allowed).toBe(false);
    clock.t = start + 1000;
    const one = sync(limiter.consume('a', 'anonymous'));
    expect(one.allowed).toBe(true);
    expect(one.remaining).toBe(0);
    expect(sync(limiter.consume('a', 'anonymous')).allowed).toBe(false);
    // 30 s later: 30 tokens back.
    clock.t = start + 31_000;
    const half = sync(limiter.consume('a', 'anonymous'));
    expect(half.allowed).toBe(true);
    expect(half.remaining).toBe(29);
    // Full again when the 31 used tokens have refilled: 62 s after the start.
    expect(half.resetAt).toBe(Math.ceil((start + 62_000) / 1000));
    clock.t = start + 61_999;
    expect(sync(limiter.consume('a', 'anonymous')).remaining).toBe(58);
    clock.t = start + 63_000; // one window after that last admission

    const full = sync(limiter.consume('a', 'anonymous'));
    expect(full.remaining).toBe(59);
  });

  test('a refused request takes no token: hammering does not push the reset further out', () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ now: clock.now });
    for (let i = 0; i < 200; i++) sync(limiter.consume('f', 'free'));
    const first = sync(limiter.consume('f', 'free'));
    for (let i = 0; i < 1000; i++) sync(limiter.consume('f', 'free'));
    const later = sync(limiter.consume('f', 'free'));
    expect(first.allowed).toBe(false);
    expect(later).toEqual(first);
    clock.t += 300; // one free-tier emission interval
    expect(sync(limiter.consume('f', 'free')).allowed).toBe(true);
  });

  test('Retry-After is the wait until the next token, at least 1 s', () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ now: clock.now });
    for (let i = 0; i < 60; i++) sync(limiter.consume('r', 'anonymous'));
    expect(sync(limiter.consume('r', 'anonymous')).retryAfter).toBe(1);
    for (let i = 0; i < 600; i++) sync(limiter.consume('p', 'pro'));
    expect(sync(limiter.consume('p', 'pro')).retryAfter).toBe(1); // 100 ms rounds up to 1 s
  });

  test('buckets are independent per key', () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ now: clock.now });
    for (let i = 0; i < 60; i++) sync(limiter.consume('x', 'anonymous'));
    expect(sync(limiter.consume('x', 'anonymous')).allowed).toBe(false);
    expect(sync(limiter.consume('y', 'anonymous')).remaining).toBe(59);
  });

  test('a key upgraded from free to pro keeps its debt in time and repays it at the pro rate', () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ now: clock.now });
    for (let i = 0; i < 200; i++) sync(limiter.consume('u', 'free'));
    // Window fully used: the pro tier sees the same 60 s of debt, so nothing is left right now...
    expect(sync(limiter.consume('u', 'pro')).allowed).toBe(false);
    // ...and one pro interval (100 ms) later one request fits.
    clock.t += 100;
    expect(sync(limiter.consume('u', 'pro')).allowed).toBe(true);
  });

  test('a clock that steps back never locks a bucket for longer than one window', () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ now: clock.now });
    for (let i = 0; i < 60; i++) sync(limiter.consume('c', 'anonymous'));
    clock.t -= 3_600_000;
    expect(sync(limiter.consume('c', 'anonymous')).allowed).toBe(false);
    clock.t += 1000;
    expect(sync(limiter.consume('c', 'anonymous')).allowed).toBe(true);
  });
});

group('pure step and describe', () => {
  test('fractional emission intervals still admit exactly the capacity (float slack)', () => {
    // 60 000 / 7 is not an integer; 7 steps must fit the window and the 8th must not.
    for (const limit of [7, 13, 59, 61, 199, 601, 997]) {
      let tat: number | null = null;
      const now = 1_000_000;
      let admitted = 0;
      for (let i = 0; i < limit + 1; i++) {
        const s = step(tat, now, limit);
        if (s.allowed) admitted++;
        tat = s.tat;
      }
      expect({ limit, admitted }).toEqual({ limit, admitted: limit });
      expect(describe(true, tat!, now, limit, 'anonymous').remaining).toBe(0);
      expect(describe(true, now + WINDOW_MS / limit, now, limit, 'anonymous').remaining).toBe(limit - 1);
    }
  });
});

group('metrics and configuration', () => {
  test('admissions and refusals are counted', () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ now: clock.now });
    const before = { ...limiterMetrics };
    for (let i = 0; i < 65; i++) limiter.consume('m', 'anonymous');
    expect(limiterMetrics.admitted - before.admitted).toBe(60);
    expect(limiterMetrics.rejections - before.rejections).toBe(5);
  });

  test('IPINTEL_RATE_LIMITS=off yields no limiter; the default store is memory', () => {
    expect(createRateLimiterFromConfig({ rateLimits: false, rateLimitStore: null })).toBeNull();
    expect(createRateLimiterFromConfig({ rateLimits: true, rateLimitStore: null })?.store).toBe('memory');
  });

  test('an unknown store setting is refused at start-up', () => {
    expect(() => createRateLimiter({ store: 'memcached://x' })).toThrow(/redis/);
  });
});
