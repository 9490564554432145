import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { createCachingResolver } from '../../src/crawlers/dns/caching-resolver.ts';
import { reverseName } from '../../src/crawlers/dns/reverse-name.ts';
import { parseDnsServer } from '../../src/crawlers/dns/server-address.ts';
import { TtlCache } from '../../src/cache/ttl-cache.ts';
import { DnsFailure } from '../../src/crawlers/dns/types.ts';
import { createUdpTransport } from '../../src/crawlers/dns/udp-transport.ts';
import { parseIp } from '../../src/net/ip.ts';
import { bloatedPtrReply, manualClock, NEGATIVE_TTL, startDnsTestServer, type DnsTestServer } from './dns-test-server.ts';
import { isHostName, MAX_FORWARD_ADDRESSES, MAX_PTR_NAMES, MAX_REPLY_BYTES } from '../../src/crawlers/dns/answer-bounds.ts';
import { answerBytes } from '../../src/crawlers/dns/caching-resolver.ts';

let server: DnsTestServer;
let silent: DnsTestServer;

beforeAll(async () => {
  server = await startDnsTestServer();
  silent = await startDnsTestServer();
  server.set('A', 'crawl-66-249-66-1.googlebot.com', { records: [{ data: '66.249.66.1', ttl: 300 }] });
  server.set('AAAA', 'v6.example.test', { records: [{ data: '2001:4860:4801:0010:0000:0000:0000:0001', ttl: 60 }] });
  server.set('PTR', '1.66.249.66.in-addr.arpa', { records: [{ data: 'Crawl-66-249-66-1.GOOGLEBOT.com.', ttl: 120 }] });
  server.set('A', 'broken.example.test', { rcode: 'SERVFAIL' });
  silent.set('A', 'crawl-66-249-66-1.googlebot.com', { silent: true });
});

afterAll(async () => {
  await server.close();
  await silent.close();
});

describe('reverse names and server addresses', () => {
  test('reverse names follow in-addr.arpa and ip6.arpa', () => {
    expect(reverseName(parseIp('66.249.66.1')!)).toBe('1.66.249.66.in-addr.arpa');
    expect(reverseName(parseIp('2001:db8::1')!)).toBe(
      '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
    );
  });

  test('IPINTEL_DNS_SERVERS entries parse as address plus port; names are refused', () => {
    expect(parseDnsServer('127.0.0.1:5353')).toEqual({ host: '127.0.0.1', port: 5353, family: 4 });
    expect(parseDnsServer('9.9.9.9')).toEqual({ host: '9.9.9.9', port: 53, family: 4 });
    expect(parseDnsServer('[::1]:5300')).toEqual({ host: '::1', port: 5300, family: 6 });
    expect(() => parseDnsServer('dns.example:53')).toThrow(/IPINTEL_DNS_SERVERS/);
    expect(() => parseDnsServer('127.0.0.1:99999')).toThrow(/IPINTEL_DNS_SERVERS/);
  });
});

describe('UDP transport against a real server on 127.0.0.1', () => {
  test('answers A, AAAA and PTR with normalized values and TTL', async () => {
    const t = createUdpTransport([parseDnsServer(server.address)], 1000);
    expect(await t.query('crawl-66-249-66-1.googlebot.com', 'A')).toEqual({ kind: 'records', values: ['66.249.66.1'], ttl: 300 });
    expect(await t.query('v6.example.test', 'AAAA')).toEqual({ kind: 'records', values: ['2001:4860:4801:10::1'], ttl: 60 });
    expect(await t.query('1.66.249.66.in-addr.arpa', 'PTR')).toEqual({
      kind: 'records',
      values: ['crawl-66-249-66-1.googlebot.com'],
      ttl: 120,
    });
  });

  test('NXDOMAIN carries the RFC 2308 negative TTL', async () => {
    const t = createUdpTransport([parseDnsServer(server.address)], 1000);
    expect(await t.query('nothing.example.test', 'A')).toEqual({ kind: 'negative', rcode: 'NXDOMAIN', ttl: NEGATIVE_TTL });
  });

  test('a silent server times out with a DnsFailure', async () => {
    const t = createUdpTransport([parseDnsServer(silent.address)], 150);
    const err = await t.query('crawl-66-249-66-1.googlebot.com', 'A').catch((e) => e);
    expect(err).toBeInstanceOf(DnsFailure);
    expect((err as DnsFailure).reason).toBe('timeout');
  });

  test('SERVFAIL from every server is a server_failure', async () => {
    const t = createUdpTransport([parseDnsServer(server.address)], 500);
    const err = await t.query('broken.example.test', 'A').catch((e) => e);
    expect((err as DnsFailure).reason).toBe('server_failure');
  });

  test('servers are tried in order: a silent first server falls through to the next', async () => {
    const t = createUdpTransport([parseDnsServer(silent.address), parseDnsServer(server.address)], 400);
    expect(await t.query('crawl-66-249-66-1.googlebot.com', 'A')).toEqual({ kind: 'records', values: ['66.249.66.1'], ttl: 300 });
  });
});

describe('caching resolver respects TTLs', () => {
  test('a positive answer is served from cache until its TTL passes', async () => {
    const clock = manualClock();
    const resolver = createCachingResolver({ transport: createUdpTransport([parseDnsServer(server.address)], 1000), cacheSize: 100, now: clock.now });
    const asked = () => server.queries.filter((q) => q === 'A crawl-66-249-66-1.googlebot.com').length;
    const before = asked();
    await resolver.resolve('crawl-66-249-66-1.googlebot.com', 'A');
    await resolver.resolve('crawl-66-249-66-1.googlebot.com', 'A');
    expect(asked()).toBe(before + 1);
    clock.advance(299_000);
    await resolver.resolve('crawl-66-249-66-1.googlebot.com', 'A');
    expect(asked()).toBe(before + 1);
    clock.advance(2_000);
    await resolver.resolve('crawl-66-249-66-1.googlebot.com', 'A');
    expect(asked()).toBe(before + 2);
  });

  test('a negative answer is cached for its SOA negative TTL', async () => {
    const clock = manualClock();
    const resolver = createCachingResolver({ transport: createUdpTransport([parseDnsServer(server.address)], 1000), cacheSize: 100, now: clock.now });
    const asked = () => server.queries.filter((q) => q === 'PTR 9.9.9.192.in-addr.arpa').length;
    const before = asked();
    expect((await resolver.resolve('9.9.9.192.in-addr.arpa', 'PTR')).kind).toBe('negative');
    clock.advance((NEGATIVE_TTL - 1) * 1000);
    await resolver.resolve('9.9.9.192.in-addr.arpa', 'PTR');
    expect(asked()).toBe(before + 1);
    clock.advance(2_000);
    await resolver.resolve('9.9.9.192.in-addr.arpa', 'PTR');
    expect(asked()).toBe(before + 2);
  });

  test('failures are not cached', async () => {
    const resolver = createCachingResolver({ transport: createUdpTransport([parseDnsServer(silent.address)], 100), cacheSize: 100, now: Date.now });
    await expect(resolver.resolve('crawl-66-249-66-1.googlebot.com', 'A')).rejects.toBeInstanceOf(DnsFailure);
    expect(resolver.peek('crawl-66-249-66-1.googlebot.com', 'A')).toBeUndefined();
  });
});

describe('TtlCache', () => {
  test('evicts the least recently used entry beyond its size', () => {
    const clock = manualClock();
    const cache = new TtlCache<number>(2, clock.now);
    cache.set('a', 1, 1000);
    cache.set('b', 2, 1000);
    expect(cache.get('a')).toBe(1); // a is now most recent
    cache.set('c', 3, 1000);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    expect(cache.size).toBe(2);
  });

  test('expires entries by their own TTL and ignores non-positive TTLs', () => {
    const clock = manualClock();
    const cache = new TtlCache<string>(10, clock.now);
    cache.set('short', 's', 1000);
    cache.set('long', 'l', 5000);
    cache.set('zero', 'z', 0);
    clock.advance(1000);
    expect(cache.get('short')).toBeUndefined();
    expect(cache.get('long')).toBe('l');
    expect(cache.get('zero')).toBeUndefined();
  });
});

describe('hostile answers are cut before they are kept (issue 26)', () => {
  test('a 64 KB PTR set (3 000+ compressed 243-character names) is refused unread', async () => {
    const zone = await startDnsTestServer();
    try {
      zone.set('PTR', '9.9.51.198.in-addr.arpa', { raw: (q) => bloatedPtrReply(q, 65_000) });
      const t = createUdpTransport([parseDnsServer(zone.address)], 1000);
      const err = await t.query('9.9.51.198.in-addr.arpa', 'PTR').catch((e) => e);
      expect(err).toBeInstanceOf(DnsFailure);
      expect((err as DnsFailure).reason).toBe('malformed');
      expect((err as DnsFailure).message).toContain(`over ${MAX_REPLY_BYTES}`);
    } finally {
      await zone.close();
    }
  });

  test('a PTR set inside the size cap keeps only the first few names', async () => {
    const zone = await startDnsTestServer();
    try {
      zone.set('PTR', '8.9.51.198.in-addr.arpa', { raw: (q) => bloatedPtrReply(q, MAX_REPLY_BYTES) });
      const t = createUdpTransport([parseDnsServer(zone.address)], 1000);
      const answer = await t.query('8.9.51.198.in-addr.arpa', 'PTR');
      if (answer.kind !== 'records') throw new Error('expected records');
      expect(answer.values).toHaveLength(MAX_PTR_NAMES);
      for (const name of answer.values) expect(name.length).toBeGreaterThanOrEqual(237);
    } finally {
      await zone.close();
    }
  });

  test('names that are not host names are dropped; forward sets are bounded', async () => {
    const zone = await startDnsTestServer();
    try {
      zone.set('PTR', '7.9.51.198.in-addr.arpa', {
        records: [
          { data: 'bad name with spaces.example', ttl: 60 },
          { data: 'ends-with-hyphen-.example', ttl: 60 },
          { data: '*.wild.example', ttl: 60 },
          { data: 'ok-1.crawl.example', ttl: 60 },
        ],
      });
      // A name over 255 bytes cannot even be decoded: the reply is refused, not waited past.
      zone.set('PTR', '6.9.51.198.in-addr.arpa', { records: [{ data: Array.from({ length: 5 }, () => 'l'.repeat(60)).join('.'), ttl: 60 }] });
      zone.set('A', 'many.example.test', { records: Array.from({ length: 100 }, (_, i) => ({ data: `10.0.${i >> 8}.${i & 255}`, ttl: 60 })) });
      const t = createUdpTransport([parseDnsServer(zone.address)], 1000);
      expect(await t.query('7.9.51.198.in-addr.arpa', 'PTR')).toEqual({ kind: 'records', values: ['ok-1.crawl.example'], ttl: 60 });
      expect(((await t.query('6.9.51.198.in-addr.arpa', 'PTR').catch((e) => e)) as DnsFailure).reason).toBe('malformed');
      const forward = await t.query('many.example.test', 'A');
      if (forward.kind !== 'records') throw new Error('expected records');
      expect(forward.values).toHaveLength(MAX_FORWARD_ADDRESSES);
    } finally {
      await zone.close();
    }
  });

  test('host name rules: length, labels, characters', () => {
    expect(isHostName('crawl-66-249-66-1.googlebot.com')).toBe(true);
    expect(isHostName('_dmarc.example.com')).toBe(true);
    expect(isHostName('a'.repeat(64) + '.com')).toBe(false);
    expect(isHostName(['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(62)].join('.'))).toBe(false); // 254
    expect(isHostName('-bad.example')).toBe(false);
    expect(isHostName('a..b')).toBe(false);
    expect(isHostName('x y.example')).toBe(false);
    expect(isHostName('')).toBe(false);
  });

  test('the answer cache is bounded by bytes as well as entries', async () => {
    const clock = manualClock();
    const values = Array.from({ length: MAX_PTR_NAMES }, (_, i) => `${'n'.repeat(60)}${i}.example`);
    const transport = { query: async () => ({ kind: 'records' as const, values, ttl: 3600 }) };
    const perEntry = answerBytes('PTR 1.2.3.4.in-addr.arpa', { kind: 'records', values, ttl: 3600 });
    const maxBytes = perEntry * 10;
    const resolver = createCachingResolver({ transport, cacheSize: 10_000, cacheBytes: maxBytes, now: clock.now });
    for (let i = 0; i < 100; i++) await resolver.resolve(`${i}.4.3.2.in-addr.arpa`, 'PTR');
    let held = 0;
    for (let i = 0; i < 100; i++) if (resolver.peek(`${i}.4.3.2.in-addr.arpa`, 'PTR')) held++;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(10);
    expect(resolver.peek('99.4.3.2.in-addr.arpa', 'PTR')).toBeDefined(); // the newest stay
  });

  test('questions in flight are bounded: beyond the bound a question fails at once', async () => {
    const never = { query: () => new Promise<never>(() => {}) };
    const resolver = createCachingResolver({ transport: never, cacheSize: 10, maxInFlight: 3, now: Date.now });
    for (let i = 0; i < 3; i++) void resolver.resolve(`${i}.example`, 'A');
    const err = await resolver.resolve('3.example', 'A').catch((e) => e);
    expect(err).toBeInstanceOf(DnsFailure);
  });
});
