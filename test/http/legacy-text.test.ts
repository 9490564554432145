/**
 * The one-line text of GET /{ip} reads the record alone (src/lookup/legacy.ts
 * legacyPlace): the same line as from the whole legacy object, and no wait on
 * a crawler's DNS proof, which only the JSON and the detail text need.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { legacyObject, legacyPlace, legacyText } from '../../src/lookup/legacy.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startDnsTestServer, type DnsTestServer } from '../crawlers/dns-test-server.ts';
import { prng } from '../helpers/prng.ts';
import { startTestServer } from '../helpers/test-server.ts';

let server: RunningServer;
let dns: DnsTestServer;

beforeAll(async () => {
  dns = await startDnsTestServer();
  // Nothing answers for the crawler address: a proof would be asked, and fail.
  dns.set('PTR', '1.66.249.66.in-addr.arpa', { rcode: 'NXDOMAIN' });
  server = await startTestServer({ IPINTEL_DNS_SERVERS: dns.address, IPINTEL_RATE_LIMITS: 'off' });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await dns?.close();
});

describe('legacy one-line text', () => {
  test('is the line the whole object gives, for random addresses', () => {
    const rand = prng(4);
    const s = server.services;
    let compared = 0;
    for (let i = 0; i < 2_000; i++) {
      const ip = `${1 + Math.floor(rand() * 223)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}.${1 + Math.floor(rand() * 254)}`;
      const hit = s.index.current.lookup(ip);
      if (!hit) continue;
      const whole = legacyObject(hit, { scoring: { verifiedCrawler: null, coverage: s.index.coverage }, policy: s.policy.current }, s.now());
      expect(legacyText(legacyPlace(hit), false, false)).toBe(legacyText(whole, false, false));
      compared++;
    }
    expect(compared).toBeGreaterThan(1_000);
  });

  test('a crawler address answers as text without asking DNS; the JSON still asks', async () => {
    const before = dns.queries.length;
    const text = await fetch(`${server.url}/66.249.66.1?format=text`);
    expect(text.status).toBe(200);
    expect(await text.text()).toMatch(/^66\.249\.66\.1\t.+\n$/);
    expect(dns.queries.length).toBe(before);
    const json = await fetch(`${server.url}/66.249.66.1`);
    expect(json.status).toBe(200);
    await json.arrayBuffer();
    expect(dns.queries.length).toBeGreaterThan(before);
  });
});

describe('the one-line memo (LegacyLines)', () => {
  test('gives the line legacyText gives, for random addresses, repeated ones and across an index reload', async () => {
    const s = server.services;
    const rand = prng(9);
    const ips: string[] = [];
    for (let i = 0; i < 3_000; i++) ips.push(`${1 + Math.floor(rand() * 223)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}.${1 + Math.floor(rand() * 254)}`);
    const check = () => {
      const { reader, lines } = s.serving.snapshot;
      let n = 0;
      // Twice over the same addresses: the second pass reads the memo.
      for (const ip of [...ips, ...ips]) {
        const hit = reader.lookup(ip);
        if (!hit) continue;
        expect(lines.line(hit)).toBe(legacyText(legacyPlace(hit), false, false));
        n++;
      }
      expect(n).toBeGreaterThan(2_000);
    };
    check();
    const before = s.serving.snapshot;
    // Another index (the same file reloaded): record ids may mean other records, a new snapshot has a new memo.
    s.index.reload();
    expect(s.serving.snapshot.lines).not.toBe(before.lines);
    check();
    // A hit of the new index is not the old memo's: rendered, not kept there.
    const fresh = s.serving.snapshot.reader.lookup('8.8.8.8')!;
    expect(before.lines.line(fresh)).toBe(legacyText(legacyPlace(fresh), false, false));
    // A hand-made hit (no index identity) is rendered, never cached.
    const lines = s.serving.snapshot.lines;
    const hit = s.index.current.lookup('8.8.8.8')!;
    const handMade = { family: hit.family, ip: '8.8.4.4', rangeStart: hit.rangeStart, rangeEnd: hit.rangeEnd, recordId: hit.recordId, record: hit.record };
    expect(lines.line(handMade)).toBe(legacyText(legacyPlace(handMade), false, false));
  });
});
