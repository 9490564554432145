/** The soak's own judgement, on synthetic data: it must fail what it is there to catch. */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { judgeRss, type RssSample } from '../../tools/soak/rss.ts';
import { requestMix } from '../../tools/soak/traffic.ts';
import { prng } from '../helpers/prng.ts';

const MiB = 1024;
/** One sample a second: a base, a reload sawtooth (+12 MiB for 2 s of every 5), plus `growth` MiB per minute. */
function series(seconds: number, growthPerMinuteMiB: number, anonShare = 0.5): RssSample[] {
  return Array.from({ length: seconds }, (_, t) => {
    const total = (110 + (t % 5 < 2 ? 12 : 0) + (growthPerMinuteMiB * t) / 60) * MiB;
    return { atMs: t * 1000, rssKiB: total, anonKiB: total * anonShare, fileKiB: total * (1 - anonShare), mappedIndexes: t % 5 < 2 ? 2 : 1 };
  });
}

describe('judgeRss', () => {
  test('a sawtooth with the reload period is flat', () => {
    const v = judgeRss(series(60, 0), 10_000, 32 * MiB);
    expect(v.judged).toBe(true);
    expect(v.flat).toBe(true);
    expect(v.maxMappedIndexes).toBe(2);
  });

  test('steady growth of 100 MiB a minute is not', () => {
    const v = judgeRss(series(60, 100), 10_000, 32 * MiB);
    expect(v.flat).toBe(false);
    expect(v.totalGrowthKiB).toBeGreaterThan(32 * MiB);
  });

  test('a heap leak shows in anonymous RSS even when the total is within the limit', () => {
    const samples = series(60, 0).map((s) => ({ ...s, anonKiB: s.anonKiB + s.atMs * 1.5 }));
    const v = judgeRss(samples, 10_000, 32 * MiB);
    expect(v.anonGrowthKiB).toBeGreaterThan(32 * MiB);
    expect(v.flat).toBe(false);
  });

  test('a run too short to judge says so instead of passing on nothing', () => {
    const v = judgeRss(series(8, 1000), 2_000, 32 * MiB);
    expect(v.judged).toBe(false);
  });
});

describe('the traffic checks catch wrong answers', () => {
  const next = requestMix(prng(7), { free: 'ipi_free', pro: 'ipi_pro' });
  const ofKind = (kind: string) => {
    for (let i = 0; i < 10_000; i++) {
      const r = next();
      if (r.kind === kind) return r;
    }
    throw new Error(`no ${kind} in 10,000 draws`);
  };
  const json = new Headers({ 'content-type': 'application/json' });

  test('a lookup answered for another address', () => {
    const r = ofKind('v1_lookup');
    const ip = r.path.slice('/v1/ip/'.length);
    if (ip.includes('.')) expect(r.check(200, 'application/json', JSON.stringify({ ip: '192.0.2.1', score: {} }), json)).toContain('ip 192.0.2.1');
    expect(r.check(200, 'application/json', 'not json', json)).toContain('not a JSON object');
  });

  test('a 429 without the spec error shape, and a text error of two lines', () => {
    expect(ofKind('v1_lookup').check(429, 'application/json', '{"message":"slow down"}', json)).toContain('error/code/details');
    const text = ofKind('text_lookup');
    expect(text.check(429, 'text/plain', 'error: slow\ndown\n', json)).toContain('one line');
  });

  test('a success where a refusal is due', () => {
    expect(ofKind('bad_ip').check(200, 'application/json', '{}', json)).toContain('success');
    expect(ofKind('unknown_key').check(200, 'application/json', '{}', json)).toContain('success');
  });

  test('a pro key that did not resolve to the pro tier', () => {
    const h = new Headers({ 'content-type': 'application/json', 'x-ratelimit-tier': 'anonymous' });
    expect(ofKind('keyed_pro_current').check(200, 'application/json', '{"ip":"127.0.0.1"}', h)).toContain('tier header anonymous');
  });
});
