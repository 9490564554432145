import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createCachingResolver } from '../../src/crawlers/dns/caching-resolver.ts';
import { reverseName } from '../../src/crawlers/dns/reverse-name.ts';
import { parseDnsServer } from '../../src/crawlers/dns/server-address.ts';
import { TtlCache } from '../../src/crawlers/dns/ttl-cache.ts';
import { DnsFailure } from '../../src/crawlers/dns/types.ts';
import { createUdpTransport } from '../../src/crawlers/dns/udp-transport.ts';
import { parseIp } from '../../src/net/ip.ts';
import { manualClock, NEGATIVE_TTL, startDnsTestServer, type DnsTestServer } from './dns-test-server.ts';

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
