/**
 * The RDAP client against real HTTP servers on 127.0.0.1 serving the real
 * registry answers of shared/feeds/rdap.
 */
import { afterEach, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { createBootstrap } from '../../src/rdap/bootstrap.ts';
import { createRdapClient, rdapQueryAddress, type RdapFailure } from '../../src/rdap/client.ts';
import { normalizeRdapNetwork } from '../../src/rdap/normalize.ts';
import { FEED_FOR_IP, feedResponse, readRdapFeed, startMockRdap, type MockRdapServer } from './rdap-feeds.ts';

const UNAVAILABLE = { available: false, network: null, contacts: [] };
const servers: MockRdapServer[] = [];
const started = (s: MockRdapServer) => (servers.push(s), s);
afterEach(() => {
  while (servers.length) servers.pop()!.stop();
});

/** A client that records its failures. */
function clientWith(options: Parameters<typeof createRdapClient>[0]) {
  const failures: RdapFailure[] = [];
  const client = createRdapClient({ ...options, onFailure: (f) => failures.push(f) });
  return { client, failures };
}

describe('with IPINTEL_RDAP_BASE', () => {
  test('every real response is fetched from <base>ip/<ip> and normalized', async () => {
    const mock = started(startMockRdap());
    const { client, failures } = clientWith({ base: mock.base });
    for (const [ip, file] of Object.entries(FEED_FOR_IP)) {
      const result = await client.lookup(ip);
      expect(result).toEqual(normalizeRdapNetwork(readRdapFeed(file), null, ip));
      expect(result.available).toBe(true);
    }
    expect(mock.requests).toEqual(Object.keys(FEED_FOR_IP).map((ip) => `/ip/${ip}`));
    expect(failures).toEqual([]);
  });

  test('a base without a trailing slash, or with a path, still gets <base>ip/<ip>', async () => {
    const mock = started(startMockRdap((url) => (url.pathname.endsWith('/ip/1.1.1.1') ? feedResponse(FEED_FOR_IP['1.1.1.1']) : new Response('', { status: 404 }))));
    const bare = await createRdapClient({ base: mock.base.replace(/\/$/, '') }).lookup('1.1.1.1');
    const mirror = await createRdapClient({ base: `${mock.base}mirror/rdap` }).lookup('1.1.1.1');
    expect(bare.network?.name).toBe('APNIC-LABS');
    expect(mirror.network?.name).toBe('APNIC-LABS');
    expect(mock.requests).toEqual(['/ip/1.1.1.1', '/mirror/rdap/ip/1.1.1.1']);
  });

  test('addresses are queried in canonical form; IPv4-mapped IPv6 as IPv4', async () => {
    const mock = started(startMockRdap());
    const client = createRdapClient({ base: mock.base });
    expect((await client.lookup('::ffff:74.125.225.229')).network?.name).toBe('GOOGLE');
    expect((await client.lookup('2001:4860:4860:0:0:0:0:8888')).network?.name).toBe('GOOGLE-IPV6');
    expect(mock.requests).toEqual(['/ip/74.125.225.229', '/ip/2001:4860:4860::8888']);
    expect(rdapQueryAddress('2001:DB8::1')).toBe('2001:db8::1');
    expect(rdapQueryAddress('1.2.3')).toBeNull();
  });

  test('an invalid address is unavailable without a request', async () => {
    const mock = started(startMockRdap());
    expect(await createRdapClient({ base: mock.base }).lookup('not-an-ip')).toEqual(UNAVAILABLE);
    expect(mock.requests).toEqual([]);
  });
});

describe('RDAP unreachable or failing -> available: false, never a rejection', () => {
  test('timeout: the server does not answer in time', async () => {
    const mock = started(startMockRdap(async () => {
      await Bun.sleep(2000);
      return feedResponse(FEED_FOR_IP['1.1.1.1']);
    }));
    const { client, failures } = clientWith({ base: mock.base, timeoutMs: 50 });
    expect(await client.lookup('1.1.1.1')).toEqual(UNAVAILABLE);
    expect(failures).toEqual([{ ip: '1.1.1.1', reason: 'timeout' }]);
  });

  test('timeout: headers arrive but the body stalls', async () => {
    const mock = started(startMockRdap(() => new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{"objectClassName":')) }), { status: 200 })));
    const { client, failures } = clientWith({ base: mock.base, timeoutMs: 100 });
    expect(await client.lookup('1.1.1.1')).toEqual(UNAVAILABLE);
    expect(failures.map((f) => f.reason)).toEqual(['timeout']);
  });

  test('nothing listens on the port', async () => {
    const mock = startMockRdap();
    const base = mock.base;
    mock.stop();
    const { client, failures } = clientWith({ base });
    expect(await client.lookup('1.1.1.1')).toEqual(UNAVAILABLE);
    expect(failures.map((f) => f.reason)).toEqual(['network']);
  });

  test('HTTP errors, the real RIPE error object, non-JSON and oversize answers', async () => {
    const routes: Record<string, () => Response> = {
      '/ip/192.0.2.1': () => new Response('upstream down', { status: 503 }),
      '/ip/192.0.2.2': () => feedResponse('icann-rdap-ripe-error.json', 501),
      '/ip/192.0.2.3': () => feedResponse('icann-rdap-ripe-error.json', 200),
      '/ip/192.0.2.4': () => new Response('<html>maintenance</html>', { status: 200 }),
      '/ip/192.0.2.5': () => feedResponse('whoisit-rdap_response_ip_v4_3.json'), // 15,852 bytes > cap below
      '/ip/192.0.2.6': () => feedResponse('whoisit-rdap_response_entity.json'),
    };
    const mock = started(startMockRdap((url) => routes[url.pathname]?.() ?? new Response('', { status: 404 })));
    const { client, failures } = clientWith({ base: mock.base, maxBodyBytes: 10_000 });
    for (let i = 1; i <= 7; i++) expect(await client.lookup(`192.0.2.${i}`)).toEqual(UNAVAILABLE);
    expect(failures).toEqual([
      { ip: '192.0.2.1', reason: 'http_status', status: 503 },
      { ip: '192.0.2.2', reason: 'http_status', status: 501 },
      { ip: '192.0.2.3', reason: 'not_ip_network' },
      { ip: '192.0.2.4', reason: 'invalid_json' },
      { ip: '192.0.2.5', reason: 'too_large' },
      { ip: '192.0.2.6', reason: 'not_ip_network' },
      { ip: '192.0.2.7', reason: 'http_status', status: 404 },
    ]);
  });

  test('a streamed answer without Content-Length is cut off at the size cap', async () => {
    const chunk = new TextEncoder().encode(`${' '.repeat(4095)}\n`);
    const mock = started(startMockRdap(() => new Response(new ReadableStream({
      pull: (c) => c.enqueue(chunk), // endless
    }), { status: 200 })));
    const { client, failures } = clientWith({ base: mock.base, maxBodyBytes: 64 * 1024 });
    expect(await client.lookup('1.1.1.1')).toEqual(UNAVAILABLE);
    expect(failures).toEqual([{ ip: '1.1.1.1', reason: 'too_large' }]);
  });

  test('a base that is not an http(s) URL is refused at start-up', () => {
    expect(() => createRdapClient({ base: 'rdap.example' })).toThrow(/http\(s\) URL/);
    expect(() => createRdapClient({ base: 'ftp://127.0.0.1/' })).toThrow(/http\(s\) URL/);
  });

  test('a fetch that throws synchronously', async () => {
    const { client, failures } = clientWith({
      base: 'http://127.0.0.1:9/',
      fetch: (() => {
        throw new TypeError('boom');
      }) as unknown as typeof fetch,
    });
    expect(await client.lookup('1.1.1.1')).toEqual(UNAVAILABLE);
    expect(failures.map((f) => f.reason)).toEqual(['network']);
  });
});

describe('with the bootstrap table', () => {
  /** A table whose registries are paths of one loopback server. */
  function loopbackBootstrap(base: string) {
    return createBootstrap({
      generated_by: 'test',
      publication: { ipv4: null, ipv6: null, asn: null },
      registries: { arin: `${base}arin/`, ripencc: `${base}ripe/` },
      ipv4: { arin: ['130.0.0.0/8', '74.0.0.0/8'], ripencc: ['62.0.0.0/8'] },
      ipv6: {},
      asn: {},
    });
  }

  test('the registry of the most specific prefix is asked; ARIN redirects legacy RIPE space', async () => {
    const mock = started(startMockRdap((url) => {
      if (url.pathname === '/arin/ip/74.125.225.229') return feedResponse(FEED_FOR_IP['74.125.225.229']);
      if (url.pathname === '/arin/ip/130.59.31.80') return Response.redirect(`${new URL(url).origin}/ripe/ip/130.59.31.80`, 301);
      if (url.pathname === '/ripe/ip/130.59.31.80') return feedResponse(FEED_FOR_IP['130.59.31.80']);
      return new Response('', { status: 404 });
    }));
    const { client, failures } = clientWith({ bootstrap: loopbackBootstrap(mock.base) });
    const google = await client.lookup('74.125.225.229');
    expect(google.network?.registry).toBe('arin');
    expect(google.network?.registered_owner).toBe('Google Inc.');
    const sw = await client.lookup('130.59.31.80');
    expect(sw.network?.name).toBe('SWITCH-LAN');
    expect(sw.network?.registry).toBe('ripencc');
    expect(mock.requests).toEqual(['/arin/ip/74.125.225.229', '/arin/ip/130.59.31.80', '/ripe/ip/130.59.31.80']);
    expect(failures).toEqual([]);
  });

  test('an address no registry covers is unavailable without a request', async () => {
    const mock = started(startMockRdap());
    const { client, failures } = clientWith({ bootstrap: loopbackBootstrap(mock.base) });
    expect(await client.lookup('10.1.2.3')).toEqual(UNAVAILABLE);
    expect(mock.requests).toEqual([]);
    expect(failures).toEqual([{ ip: '10.1.2.3', reason: 'no_server' }]);
  });

  test('redirects stop after a few hops, and never leave the known registries', async () => {
    const mock = started(startMockRdap((url) => {
      if (url.pathname === '/arin/ip/74.1.1.1') return new Response(null, { status: 302, headers: { location: '/arin/ip/74.1.1.1' } });
      // Same server under another name: not a registry host, so not followed.
      if (url.pathname === '/arin/ip/74.2.2.2') return Response.redirect(`http://localhost:${url.port}/ripe/ip/74.2.2.2`, 307);
      if (url.pathname === '/arin/ip/74.3.3.3') return new Response(null, { status: 301 });
      return new Response('', { status: 404 });
    }));
    const { client, failures } = clientWith({ bootstrap: loopbackBootstrap(mock.base), maxRedirects: 3 });
    for (const ip of ['74.1.1.1', '74.2.2.2', '74.3.3.3']) expect(await client.lookup(ip)).toEqual(UNAVAILABLE);
    expect(failures).toEqual([
      { ip: '74.1.1.1', reason: 'redirect', status: 302 },
      { ip: '74.2.2.2', reason: 'redirect', status: 307 },
      { ip: '74.3.3.3', reason: 'redirect', status: 301 },
    ]);
    // The loop was followed 3 times after the first request; the foreign host was never asked.
    expect(mock.requests).toEqual(['/arin/ip/74.1.1.1', '/arin/ip/74.1.1.1', '/arin/ip/74.1.1.1', '/arin/ip/74.1.1.1', '/arin/ip/74.2.2.2', '/arin/ip/74.3.3.3']);
  });
});

describe('cache', () => {
  test('answers are reused, and each caller gets its own copy', async () => {
    const mock = started(startMockRdap());
    const client = createRdapClient({ base: mock.base });
    const first = await client.lookup('1.1.1.1');
    first.contacts.length = 0;
    first.network!.name = 'changed by a caller';
    const second = await client.lookup('1.1.1.1');
    expect(second.network?.name).toBe('APNIC-LABS');
    expect(second.contacts).toHaveLength(2);
    expect(mock.requests).toEqual(['/ip/1.1.1.1']);
  });

  test('peek answers from the cache only, never asking the registry', async () => {
    const mock = started(startMockRdap());
    const client = createRdapClient({ base: mock.base });
    expect(client.peek('1.1.1.1')).toBeNull();
    expect(mock.requests).toEqual([]);
    await client.lookup('1.1.1.1');
    expect(client.peek('1.1.1.1')?.network?.registered_owner).toBeNull();
    expect(client.peek('1.1.1.1')?.network?.name).toBe('APNIC-LABS');
    expect(client.peek('::ffff:1.1.1.1')?.network?.name).toBe('APNIC-LABS');
    expect(client.peek('bogus')).toBeNull();
    expect(mock.requests).toEqual(['/ip/1.1.1.1']);
  });

  test('peek of a lookup hit reads its canonical text (the parsed address), IPv4 for a mapped form, without parsing again', async () => {
    const mock = started(startMockRdap());
    const client = createRdapClient({ base: mock.base });
    await client.lookup('1.1.1.1');
    const { IndexReader } = await import('../../src/index/reader.ts');
    const { fixtureIndexPath } = await import('../helpers/fixture-index.ts');
    const hit = IndexReader.open(await fixtureIndexPath()).lookup('::ffff:1.1.1.1')!;
    expect(hit.ip).toBe('1.1.1.1');
    expect(client.peek(hit)?.network?.name).toBe('APNIC-LABS');
    // The hit's text is used as the key as it is: a hand-made hit with other text finds nothing.
    expect(client.peek({ ...hit, ip: ' 1.1.1.1' })).toBeNull();
  }, 120_000);

  test('peek never hands out contacts: only the Pro lookup gets them', async () => {
    const mock = started(startMockRdap());
    const client = createRdapClient({ base: mock.base });
    const full = await client.lookup('192.198.0.0');
    expect(full.contacts.map((c) => c.name)).toContain('Daniel Petsinger');
    const peeked = client.peek('192.198.0.0');
    expect(peeked).toEqual({ available: true, network: full.network, contacts: [] });
    // The cache itself still holds them for the next Pro lookup.
    expect(await client.lookup('192.198.0.0')).toEqual(full);
    expect(mock.requests).toEqual(['/ip/192.198.0.0']);
  });

  test('concurrent lookups of one address share one request', async () => {
    const mock = started(startMockRdap(async (url) => {
      await Bun.sleep(30);
      return feedResponse(FEED_FOR_IP[url.pathname.slice('/ip/'.length)]);
    }));
    const client = createRdapClient({ base: mock.base });
    const results = await Promise.all(Array.from({ length: 5 }, () => client.lookup('62.239.237.1')));
    expect(new Set(results.map((r) => r.network?.name))).toEqual(new Set(['BT-CORPORATE']));
    expect(mock.requests).toEqual(['/ip/62.239.237.1']);
  });

  test('failures are cached for the short negative TTL, answers for the long one', async () => {
    let healthy = false;
    const mock = started(startMockRdap((url) => (healthy ? feedResponse(FEED_FOR_IP[url.pathname.slice(4)]) : new Response('', { status: 503 }))));
    let clock = 1_000_000;
    const client = createRdapClient({ base: mock.base, now: () => clock, negativeTtlMs: 60_000, cacheTtlMs: 3_600_000 });
    expect((await client.lookup('1.1.1.1')).available).toBe(false);
    healthy = true;
    clock += 59_000;
    expect((await client.lookup('1.1.1.1')).available).toBe(false); // still the cached failure
    expect(mock.requests).toHaveLength(1);
    clock += 2_000;
    expect((await client.lookup('1.1.1.1')).available).toBe(true);
    expect(mock.requests).toHaveLength(2);
    clock += 3_599_000;
    await client.lookup('1.1.1.1');
    expect(mock.requests).toHaveLength(2);
    clock += 2_000;
    await client.lookup('1.1.1.1');
    expect(mock.requests).toHaveLength(3);
  });

  test('a failure cached when the clock read 0 still expires (lru-cache\'s own TTL kept it for ever)', async () => {
    let healthy = false;
    const mock = started(startMockRdap((url) => (healthy ? feedResponse(FEED_FOR_IP[url.pathname.slice(4)]) : new Response('', { status: 503 }))));
    let clock = 0;
    const client = createRdapClient({ base: mock.base, now: () => clock, negativeTtlMs: 60_000 });
    expect((await client.lookup('1.1.1.1')).available).toBe(false);
    healthy = true;
    clock += 61_000;
    expect((await client.lookup('1.1.1.1')).available).toBe(true);
    expect(mock.requests).toHaveLength(2);
  });

  test('the cache is bounded: the least recently used address is dropped', async () => {
    const mock = started(startMockRdap());
    const client = createRdapClient({ base: mock.base, cacheSize: 2 });
    for (const ip of ['1.1.1.1', '62.239.237.1', '1.1.1.1', '210.107.73.73', '1.1.1.1', '62.239.237.1']) await client.lookup(ip);
    // 62.239.237.1 was least recently used when 210.107.73.73 came in, so it was asked again.
    expect(mock.requests).toEqual(['/ip/1.1.1.1', '/ip/62.239.237.1', '/ip/210.107.73.73', '/ip/62.239.237.1']);
  });

  test('the cache is bounded in bytes too: past the bound the least recently used answer goes', async () => {
    const [a, b, c] = ['1.1.1.1', '62.239.237.1', '210.107.73.73'];
    const sizer = createRdapClient({ base: started(startMockRdap()).base });
    const size = async (ip: string) => JSON.stringify(await sizer.lookup(ip)).length;
    const [sa, sb, sc] = [await size(a), await size(b), await size(c)];
    const bound = Math.max(sa + sb, sa + sc);
    expect(sa + sb + sc).toBeGreaterThan(bound); // the three together do not fit
    const mock = started(startMockRdap());
    const client = createRdapClient({ base: mock.base, cacheMaxBytes: bound });
    for (const ip of [a, b, a, c, a, b]) await client.lookup(ip);
    // b was least recently used when c came in, so it was asked again; a stayed.
    expect(mock.requests).toEqual([`/ip/${a}`, `/ip/${b}`, `/ip/${c}`, `/ip/${b}`]);
  });

  test('an answer larger than the byte bound is not kept at all', async () => {
    const mock = started(startMockRdap());
    const client = createRdapClient({ base: mock.base, cacheMaxBytes: 100 });
    expect((await client.lookup('1.1.1.1')).available).toBe(true);
    expect((await client.lookup('1.1.1.1')).available).toBe(true);
    expect(client.peek('1.1.1.1')).toBeNull();
    expect(mock.requests).toEqual(['/ip/1.1.1.1', '/ip/1.1.1.1']);
  });
});
