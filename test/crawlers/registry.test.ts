import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CRAWLER_FAMILIES, CRAWLER_KEYS, crawlerFamily } from '../../src/crawlers/registry.ts';
import { familiesClaimedBy, familiesForHostname, hostnameIsUnder, userAgentClaims } from '../../src/crawlers/matching.ts';
import { SHARED_FEEDS_DIR, testWithShared } from '../helpers/shared-feeds.ts';

const REQUIRED_KEYS = [
  'googlebot', 'google-special', 'google-user-triggered', 'bingbot', 'applebot', 'duckduckbot', 'gptbot',
  'oai-searchbot', 'chatgpt-user', 'perplexitybot', 'perplexity-user', 'ahrefsbot', 'yandexbot', 'baiduspider',
  'amazonbot', 'ccbot',
];

describe('crawler registry', () => {
  test('holds every key interface.md names, once each', () => {
    for (const key of REQUIRED_KEYS) expect(crawlerFamily(key)?.key).toBe(key);
    expect(new Set(CRAWLER_KEYS).size).toBe(CRAWLER_KEYS.length);
    expect(crawlerFamily('no-such-bot')).toBeNull();
    expect(crawlerFamily(null)).toBeNull();
  });

  testWithShared('every crawler key used by the real snapshots\' manifest is registered', () => {
    const manifest = JSON.parse(readFileSync(join(SHARED_FEEDS_DIR, 'feeds.json'), 'utf8'));
    const text = JSON.stringify(manifest);
    const used = [...text.matchAll(/"crawler":\s*"([^"]+)"/g)].map((m) => m[1]);
    expect(used.length).toBeGreaterThan(10);
    for (const key of used) expect(CRAWLER_KEYS).toContain(key);
  });

  test('DNS families have suffixes; range-and-UA families have a range feed and tokens', () => {
    for (const f of CRAWLER_FAMILIES) {
      expect(f.userAgentTokens.length).toBeGreaterThan(0);
      if (f.verification === 'reverse_forward_dns') expect(f.dnsSuffixes.length).toBeGreaterThan(0);
      else expect(f.rangeFeed).not.toBeNull();
    }
  });
});

describe('hostname suffix matching is label-exact', () => {
  test.each([
    ['crawl-66-249-66-1.googlebot.com', 'googlebot.com', true],
    ['crawl-66-249-66-1.googlebot.com.', 'googlebot.com', true],
    ['CRAWL-1.GoogleBot.COM', 'googlebot.com', true],
    ['geo-crawl-1.geo.googlebot.com', 'googlebot.com', true],
    ['googlebot.com.evil.example', 'googlebot.com', false],
    ['evilgooglebot.com', 'googlebot.com', false],
    ['crawl-1.googlebot.co', 'googlebot.com', false],
    ['googlebot.com', 'googlebot.com', false],
    ['x.bc.googleusercontent.com', 'gae.googleusercontent.com', false],
    ['x.gae.googleusercontent.com', 'gae.googleusercontent.com', true],
  ])('%s under %s is %p', (host, suffix, expected) => {
    expect(hostnameIsUnder(host, suffix)).toBe(expected);
  });

  test('a hostname names its family; the most specific suffix comes first', () => {
    expect(familiesForHostname('msnbot-157-55-39-1.search.msn.com').map((f) => f.key)).toEqual(['bingbot']);
    expect(familiesForHostname('1-2-3-4.crawl.amazonbot.amazon').map((f) => f.key)).toEqual(['amazonbot']);
    expect(familiesForHostname('a.gae.googleusercontent.com')[0].key).toBe('google-user-triggered');
    expect(familiesForHostname('rate-limited-proxy-1.google.com').map((f) => f.key)).toEqual(['google-special', 'google-user-triggered']);
    expect(familiesForHostname('googlebot.com.evil.example')).toEqual([]);
    expect(familiesForHostname('ec2-1-2-3-4.compute-1.amazonaws.com')).toEqual([]);
  });
});

describe('user-agent tokens', () => {
  test('are matched case-insensitively inside the full UA string', () => {
    const gptbot = crawlerFamily('gptbot')!;
    expect(userAgentClaims('Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)', gptbot)).toBe(true);
    expect(userAgentClaims('mozilla/5.0 (compatible; gptbot/1.0)', gptbot)).toBe(true);
    expect(userAgentClaims('Mozilla/5.0 (Windows NT 10.0)', gptbot)).toBe(false);
    expect(userAgentClaims(null, gptbot)).toBe(false);
    expect(userAgentClaims('', gptbot)).toBe(false);
  });

  test('name the claimed families', () => {
    expect(familiesClaimedBy('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)').map((f) => f.key)).toEqual(['googlebot']);
    expect(familiesClaimedBy('Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)').map((f) => f.key)).toEqual(['bingbot']);
    expect(familiesClaimedBy('curl/8.0')).toEqual([]);
  });
});
