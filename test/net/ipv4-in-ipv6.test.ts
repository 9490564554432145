/**
 * One rule for IPv4 written as IPv6 (net/ip.ts embeddedIPv4Words): the index
 * reader, the RDAP client, the crawler verification request and the caller
 * IP all answer an IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible
 * (::a.b.c.d) address as its IPv4 address, and every other address the same
 * canonical way.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { readVerifyRequest } from '../../src/crawlers/verify-request.ts';
import { clientIp, TrustedProxies } from '../../src/http/client-ip.ts';
import { canonicalAddress } from '../../src/net/ip.ts';
import { rdapQueryAddress } from '../../src/rdap/client.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { prng } from '../helpers/prng.ts';
import { startTestServer } from '../helpers/test-server.ts';

let server: RunningServer;
beforeAll(async () => {
  server = await startTestServer({ IPINTEL_RATE_LIMITS: 'off' });
}, 120_000);
afterAll(() => server.stop());

const verifyIp = async (ip: string) => (await readVerifyRequest(new Request('http://127.0.0.1/v1/crawler/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ip }) }))).ip;

/** What each part of the service takes an address text to be. */
async function readings(text: string) {
  return {
    index: server.services.index.current.lookup(text)?.ip ?? null,
    rdap: rdapQueryAddress(text),
    verify: await verifyIp(text),
    caller: clientIp(text, new Headers(), new TrustedProxies([])),
    canonical: canonicalAddress(text),
  };
}

test('IPv4-compatible and IPv4-mapped forms are the IPv4 address everywhere', async () => {
  for (const [text, v4] of [
    ['::66.249.66.1', '66.249.66.1'],
    ['::ffff:66.249.66.1', '66.249.66.1'],
    ['0:0:0:0:0:ffff:808:808', '8.8.8.8'],
    ['::808:808', '8.8.8.8'],
    ['::0.0.0.2', '0.0.0.2'],
  ]) {
    expect({ text, ...(await readings(text)) }).toEqual({ text, index: v4, rdap: v4, verify: v4, caller: v4, canonical: v4 });
  }
});

test(':: and ::1 stay IPv6; other IPv6 forms are canonical (RFC 5952) everywhere', async () => {
  for (const [text, v6] of [
    ['::', '::'],
    ['::1', '::1'],
    ['64:ff9b::1.2.3.4', '64:ff9b::102:304'],
    ['2001:DB8:0:0::1', '2001:db8::1'],
    ['::1:0:0:1', '::1:0:0:1'],
  ]) {
    expect({ text, ...(await readings(text)) }).toEqual({ text, index: v6, rdap: v6, verify: v6, caller: v6, canonical: v6 });
  }
});

test('random addresses in any IPv6 spelling read the same in every part', async () => {
  const rnd = prng(19);
  const word = () => Math.floor(rnd() * 65536).toString(16);
  const byte = () => Math.floor(rnd() * 256);
  for (let i = 0; i < 300; i++) {
    const kind = i % 4;
    const text =
      kind === 0 ? `::${byte()}.${byte()}.${byte()}.${byte()}` : kind === 1 ? `::ffff:${word()}:${word()}` : kind === 2 ? `::${word()}:${word()}` : `2${word().slice(0, 3)}:${word()}::${word()}`;
    const r = await readings(text);
    expect({ text, ...r } as Record<string, unknown>).toEqual({ text, index: r.canonical, rdap: r.canonical, verify: r.canonical, caller: r.canonical, canonical: r.canonical });
  }
});
