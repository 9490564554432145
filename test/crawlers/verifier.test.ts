import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { createCrawlerVerifier } from '../../src/crawlers/verifier.ts';
import { manualClock, startDnsTestServer, type DnsTestServer } from './dns-test-server.ts';
import { makeHit } from './hits.ts';

const GOOGLEBOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const GPTBOT_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';

let dns: DnsTestServer;

beforeAll(async () => {
  dns = await startDnsTestServer();
  // Genuine Googlebot: PTR into googlebot.com, forward back to the same address.
  dns.set('PTR', '1.66.249.66.in-addr.arpa', { records: [{ data: 'crawl-66-249-66-1.googlebot.com', ttl: 600 }] });
  dns.set('A', 'crawl-66-249-66-1.googlebot.com', { records: [{ data: '66.249.66.1', ttl: 300 }] });
  // Genuine Googlebot over IPv6.
  dns.set('PTR', '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.0.1.0.8.4.0.6.8.4.1.0.0.2.ip6.arpa', {
    records: [{ data: 'crawl-2001-4860-4801-10--1.googlebot.com', ttl: 600 }],
  });
  dns.set('AAAA', 'crawl-2001-4860-4801-10--1.googlebot.com', { records: [{ data: '2001:4860:4801:10::1', ttl: 600 }] });
  // Spoof 1: the attacker controls the PTR of their own block and names a host under their own domain.
  dns.set('PTR', '7.113.0.203.in-addr.arpa', { records: [{ data: 'crawl-66-249-66-1.googlebot.com.evil.example', ttl: 600 }] });
  dns.set('A', 'crawl-66-249-66-1.googlebot.com.evil.example', { records: [{ data: '203.0.113.7', ttl: 600 }] });
  // Spoof 2: the PTR claims googlebot.com, but googlebot.com's forward answer is another address.
  dns.set('PTR', '8.113.0.203.in-addr.arpa', { records: [{ data: 'crawl-66-249-66-1.googlebot.com', ttl: 600 }] });
  // Timeout: an address in the Googlebot range whose PTR never answers.
  dns.set('PTR', '9.66.249.66.in-addr.arpa', { silent: true });
  // Slow: answers after the GET budget.
  dns.set('PTR', '20.66.249.66.in-addr.arpa', { records: [{ data: 'crawl-66-249-66-20.googlebot.com', ttl: 600 }], delayMs: 300 });
  dns.set('A', 'crawl-66-249-66-20.googlebot.com', { records: [{ data: '66.249.66.20', ttl: 600 }] });
  // An ambiguous Google host (google.com is both special crawlers and user-triggered fetchers).
  dns.set('PTR', '5.4.3.74.in-addr.arpa', { records: [{ data: 'google-proxy-74-3-4-5.google.com', ttl: 600 }] });
  dns.set('A', 'google-proxy-74-3-4-5.google.com', { records: [{ data: '74.3.4.5', ttl: 600 }] });
  // Server failure for Bingbot.
  dns.set('PTR', '1.39.55.157.in-addr.arpa', { rcode: 'SERVFAIL' });
});

afterAll(() => dns.close());

function verifier(now?: () => number) {
  return createCrawlerVerifier({ dnsServers: [dns.address], timeoutMs: 1000, cacheSize: 1000, now });
}

describe('reverse-forward DNS families', () => {
  test('a genuine Googlebot address is verified from the IP alone', async () => {
    const v = await verifier().verify({ ip: '66.249.66.1', userAgent: null, hit: makeHit('66.249.66.1', { crawler: 'googlebot' }) });
    expect(v.status).toBe('verified');
    expect(v.family?.key).toBe('googlebot');
    expect(v.verifiedBy).toBe('reverse_forward_dns');
    expect(v.hostname).toBe('crawl-66-249-66-1.googlebot.com');
    expect(v.reasonCode).toBe('verified_crawler');
    expect(v.isKnownCrawler && v.isVerifiedCrawler).toBe(true);
  });

  test('DNS alone proves Googlebot even outside the published ranges (the PTR names the family)', async () => {
    const v = await verifier().verify({ ip: '66.249.66.1', userAgent: null, hit: makeHit('66.249.66.1') });
    expect(v.status).toBe('verified');
    expect(v.family?.key).toBe('googlebot');
  });

  test('IPv6 Googlebot is proven through ip6.arpa and AAAA', async () => {
    const v = await verifier().verify({ ip: '2001:4860:4801:10::1', userAgent: GOOGLEBOT_UA, hit: makeHit('2001:4860:4801:10::1', { crawler: 'googlebot' }) });
    expect(v.status).toBe('verified');
    expect(v.hostname).toBe('crawl-2001-4860-4801-10--1.googlebot.com');
  });

  test('a PTR under an attacker domain ending in googlebot.com.evil.example is not accepted', async () => {
    const v = await verifier().verify({ ip: '203.0.113.7', userAgent: GOOGLEBOT_UA, hit: makeHit('203.0.113.7') });
    expect(v.status).toBe('not_known');
    expect(v.isVerifiedCrawler).toBe(false);
    expect(v.hostname).toBeNull();
    expect(v.reasonCode).toBe('unverified_claim');
    // The PTR was read and rejected on its name, before any forward lookup.
    expect(dns.queries).toContain('PTR 7.113.0.203.in-addr.arpa');
    expect(dns.queries).not.toContain('A crawl-66-249-66-1.googlebot.com.evil.example');
  });

  test('a googlebot.com PTR whose forward lookup gives another address is a dns_mismatch', async () => {
    const v = await verifier().verify({ ip: '203.0.113.8', userAgent: GOOGLEBOT_UA, hit: makeHit('203.0.113.8') });
    expect(v.status).toBe('not_known');
    expect(v.reasonCode).toBe('dns_mismatch');
    expect(v.family).toBeNull();
  });

  test('the same mismatch inside the official range is known_unverified', async () => {
    const v = await verifier().verify({ ip: '203.0.113.8', userAgent: null, hit: makeHit('203.0.113.8', { crawler: 'googlebot' }) });
    expect(v.status).toBe('known_unverified');
    expect(v.reasonCode).toBe('dns_mismatch');
    expect(v.family?.key).toBe('googlebot');
  });

  test('a DNS timeout gives known_unverified with dns_timeout, not an error', async () => {
    const v = await verifier().verify({ ip: '66.249.66.9', userAgent: GOOGLEBOT_UA, hit: makeHit('66.249.66.9', { crawler: 'googlebot' }) });
    expect(v.status).toBe('known_unverified');
    expect(v.reasonCode).toBe('dns_timeout');
    expect(v.isVerifiedCrawler).toBe(false);
  });

  test('a DNS server failure is reported as dns_timeout too', async () => {
    const v = await verifier().verify({ ip: '157.55.39.1', userAgent: null, hit: makeHit('157.55.39.1', { crawler: 'bingbot' }) });
    expect(v.status).toBe('known_unverified');
    expect(v.reasonCode).toBe('dns_timeout');
  });

  test('the user agent cannot verify a DNS family inside its range', async () => {
    const v = await verifier().verify({ ip: '66.249.66.99', userAgent: GOOGLEBOT_UA, hit: makeHit('66.249.66.99', { crawler: 'googlebot' }) });
    expect(v.status).toBe('known_unverified');
    expect(v.reasonCode).toBe('dns_mismatch');
  });

  test('private addresses are not sent to DNS', async () => {
    const before = dns.queries.length;
    const hit = makeHit('10.1.2.3', { specialUse: { name: 'Private-Use', cidr: '10.0.0.0/8', rfc: 'RFC1918', kind: 'private', globallyReachable: false } });
    const v = await verifier().verify({ ip: '10.1.2.3', userAgent: null, hit });
    expect(v.status).toBe('not_known');
    expect(v.reasonCode).toBe('not_a_known_crawler');
    expect(dns.queries.length).toBe(before);
  });
});

describe('range-and-user-agent families', () => {
  const hit = makeHit('20.171.206.10', { crawler: 'gptbot' });

  test('need both the official range and the UA token', async () => {
    const before = dns.queries.length;
    const both = await verifier().verify({ ip: '20.171.206.10', userAgent: GPTBOT_UA, hit });
    expect(both.status).toBe('verified');
    expect(both.verifiedBy).toBe('ip_range_and_user_agent');
    expect(both.hostname).toBeNull();
    expect(both.family?.provider).toBe('OpenAI');
    // No DNS is needed for a family proven by its range.
    expect(dns.queries.length).toBe(before);
  });

  test('range with another UA is ua_mismatch; range without UA is range_only', async () => {
    const other = await verifier().verify({ ip: '20.171.206.10', userAgent: 'Mozilla/5.0 (Windows NT 10.0)', hit });
    expect(other.status).toBe('known_unverified');
    expect(other.reasonCode).toBe('ua_mismatch');
    const none = await verifier().verify({ ip: '20.171.206.10', userAgent: null, hit });
    expect(none.status).toBe('known_unverified');
    expect(none.reasonCode).toBe('range_only');
  });

  test('the UA token outside the range is an unverified claim', async () => {
    const v = await verifier().verify({ ip: '198.51.100.4', userAgent: GPTBOT_UA, hit: makeHit('198.51.100.4') });
    expect(v.status).toBe('not_known');
    expect(v.reasonCode).toBe('unverified_claim');
    expect(v.isKnownCrawler).toBe(false);
  });

  test('an ordinary address with an ordinary UA is not a known crawler', async () => {
    const v = await verifier().verify({ ip: '198.51.100.5', userAgent: 'curl/8.5.0', hit: makeHit('198.51.100.5') });
    expect(v.status).toBe('not_known');
    expect(v.reasonCode).toBe('not_a_known_crawler');
  });
});

describe('cached proofs for GET lookups', () => {
  test('proofFor is empty until a check proves the address, then follows the DNS TTL', async () => {
    const clock = manualClock();
    const cv = verifier(clock.now);
    expect(cv.proofFor('66.249.66.1')).toBeNull();
    await cv.verify({ ip: '66.249.66.1', userAgent: null, hit: makeHit('66.249.66.1', { crawler: 'googlebot' }) });
    expect(cv.proofFor('66.249.66.1')).toEqual({ key: 'googlebot', hostname: 'crawl-66-249-66-1.googlebot.com', verifiedBy: 'reverse_forward_dns' });
    expect(cv.proofFor('::ffff:66.249.66.1')?.key).toBe('googlebot');
    // The proof lives as long as the shorter of the PTR (600 s) and A (300 s) TTLs.
    clock.advance(299_000);
    expect(cv.proofFor('66.249.66.1')).not.toBeNull();
    clock.advance(2_000);
    expect(cv.proofFor('66.249.66.1')).toBeNull();
  });

  test('startProof proves an address in a DNS family range within the budget', async () => {
    const proof = await verifier().startProof(makeHit('66.249.66.1', { crawler: 'googlebot' }), 2000);
    expect(proof).toEqual({ key: 'googlebot', hostname: 'crawl-66-249-66-1.googlebot.com', verifiedBy: 'reverse_forward_dns' });
  });

  test('startProof gives up at the budget but the check completes in the background', async () => {
    const cv = verifier();
    const hit = makeHit('66.249.66.20', { crawler: 'googlebot' });
    expect(await cv.startProof(hit, 10)).toBeNull();
    // Bounded wait for the background check to land in the cache.
    for (let i = 0; i < 100 && !cv.proofFor('66.249.66.20'); i++) await Bun.sleep(20);
    expect(cv.proofFor('66.249.66.20')?.hostname).toBe('crawl-66-249-66-20.googlebot.com');
  });

  test('startProof does not query DNS for addresses outside DNS-family ranges', async () => {
    const before = dns.queries.length;
    expect(await verifier().startProof(makeHit('66.249.66.1'), 500)).toBeNull();
    expect(await verifier().startProof(makeHit('20.171.206.10', { crawler: 'gptbot' }), 500)).toBeNull();
    expect(dns.queries.length).toBe(before);
  });

  test('the cached proof does not depend on the caller User-Agent', async () => {
    const cv = verifier();
    const v = await cv.verify({ ip: '74.3.4.5', userAgent: 'FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)', hit: makeHit('74.3.4.5') });
    expect(v.status).toBe('verified');
    expect(v.family?.key).toBe('google-user-triggered');
    // Without caller input the most specific suffix, then registry order, decides.
    expect(cv.proofFor('74.3.4.5')?.key).toBe('google-special');
  });
});
