/**
 * GET /v1/asn/{asn} and the alias GET /asn/{asn} (spec 2.5, 4.4):
 * identical bodies, the local name, build-time threat density with its
 * documented threshold, ASN-DROP context, and `radar` from a loopback
 * enrichment server (cached, null when unset, failing or slow).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { loadManifest } from '../../index-builder/manifest.ts';
import { SIGNIFICANT_MIN_ADDRESSES, SIGNIFICANT_RATIO } from '../../src/lookup/asn.ts';
import { createRadarClient } from '../../src/lookup/radar.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { call, expectError, NO_LIMITS } from './support.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { SHARED_FEEDS_DIR, testWithShared } from '../helpers/shared-feeds.ts';

let server: RunningServer;
let radarServer: ReturnType<typeof Bun.serve>;
const radarRequests: Array<{ path: string; auth: string | null }> = [];
let withRadar: RunningServer;
let noThreat: RunningServer;
const thinDir = mkdtempSync(join(tmpdir(), 'asn-thin-'));

beforeAll(async () => {
  // A loopback stand-in for the enrichment endpoint: a Radar-style envelope for AS13335,
  // a 500 for AS666, a hang for AS999 (longer than the client's timeout), 404 otherwise.
  radarServer = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      radarRequests.push({ path, auth: req.headers.get('authorization') });
      if (path === '/asn/13335/info') return Response.json({ success: true, result: { asn: 13335, name: 'CLOUDFLARENET', country: 'US' } });
      if (path === '/asn/666/info') return new Response('boom', { status: 500 });
      if (path === '/asn/999/info') {
        await Bun.sleep(3_000);
        return Response.json({ result: { late: true } });
      }
      return new Response('{}', { status: 404 });
    },
  });
  server = await startTestServer(NO_LIMITS);
  // An index with ASN ranges only, as the embedded default: no threat list at all.
  await Bun.write(join(thinDir, 'asn.csv'), ['8.8.8.0,8.8.8.255,15169,GOOGLE', '193.0.0.0,193.0.7.255,3333,RIPE-NCC'].join('\n') + '\n');
  await Bun.write(join(thinDir, 'feeds.json'), JSON.stringify({ sources: [{ type: 'asn-csv', path: 'asn.csv' }] }));
  await buildIndex({ sources: loadManifest(join(thinDir, 'feeds.json')), out: join(thinDir, 'thin.idx'), quiet: true });
  noThreat = await startTestServer({ ...NO_LIMITS, IPINTEL_INDEX: join(thinDir, 'thin.idx') });
  withRadar = await startTestServer({ ...NO_LIMITS, IPINTEL_RADAR_URL: `http://127.0.0.1:${radarServer.port}/asn/{asn}/info`, IPINTEL_RADAR_TOKEN: 'radar-token' });
}, 120_000);
afterAll(async () => {
  await server.stop();
  await withRadar.stop();
  await noThreat?.stop();
  radarServer.stop(true);
  rmSync(thinDir, { recursive: true, force: true });
});

describe('threat density without threat data', () => {
  test('no threat list loaded: counts, ratio and significance are null (unknown, not zero) and the source says why', async () => {
    for (const asn of ['AS15169', 'AS3333', 'AS4294967295']) {
      for (const prefix of ['/v1/asn/', '/asn/']) {
        const d = (await call(noThreat.url, prefix + asn)).json().threat_density;
        expect(d).toMatchObject({ threat_network_count: null, threat_ipv4_addresses: null, ratio: null, percent: null, significant: null, threat_data: 'unavailable' });
        expect(d.source).toContain('no threat lists are loaded');
      }
    }
    // What the loaded ASN ranges do say still stands.
    expect((await call(noThreat.url, '/v1/asn/AS15169')).json().threat_density.total_ipv4_addresses).toBe(256);
  });

  test('with threat lists loaded the counts are stated, with the lists\' state', async () => {
    const d = (await call(server.url, '/v1/asn/AS15169')).json().threat_density;
    expect(['ready', 'stale']).toContain(d.threat_data);
    if (d.threat_data === 'stale') expect(d.source).toContain('stale');
    expect(d.threat_ipv4_addresses).toBe(0);
  });
});

/** Runs `use` against a server on the fixture index built from the real snapshots (facts of the complete files). */
async function onRealIndex(use: (url: string) => Promise<void>): Promise<void> {
  const real = await startTestServer({ ...NO_LIMITS, IPINTEL_INDEX: await fixtureIndexPath(SHARED_FEEDS_DIR) });
  try {
    await use(real.url);
  } finally {
    await real.stop();
  }
}

describe('the ASN object', () => {
  testWithShared('AS15169: local name, density over its announced IPv4 space, no ASN-DROP, radar null when unset', () => onRealIndex(async (url) => {
    const a = await call(url, '/v1/asn/AS15169');
    expect(a.status).toBe(200);
    const b = a.json();
    expect(Object.keys(b)).toEqual(['asn', 'name', 'radar', 'threat_density', 'asndrop']);
    expect(b.asn).toBe('AS15169');
    expect(b.name).toBe('Google');
    expect(b.radar).toBeNull();
    expect(b.asndrop).toBeNull();
    const d = b.threat_density;
    expect(Object.keys(d).sort()).toEqual(['percent', 'ratio', 'significant', 'source', 'threat_data', 'threat_ipv4_addresses', 'threat_network_count', 'total_ipv4_addresses']);
    expect(d.total_ipv4_addresses).toBeGreaterThan(1_000_000); // Google announces millions of IPv4 addresses in the real RouteViews snapshot
    expect(d.threat_ipv4_addresses).toBe(0);
    expect(d.significant).toBe(false);
    expect(typeof d.source).toBe('string');
    expect(d.source.length).toBeGreaterThan(10);
  }), 120_000);

  test('an ASN whose announced space is all on the DROP list is significant', async () => {
    // AS210558 announces only netblocks that the real Spamhaus DROP snapshot lists.
    const d = (await call(server.url, '/v1/asn/AS210558')).json().threat_density;
    expect(d.threat_network_count).toBeGreaterThan(0);
    expect(d.threat_ipv4_addresses).toBe(d.total_ipv4_addresses);
    expect(d.ratio).toBe(1);
    expect(d.percent).toBe(100);
    expect(d.significant).toBe(true);
  });

  test('a large network with a few listed blocks is not significant (ratio under the threshold)', async () => {
    const d = (await call(server.url, '/v1/asn/AS12576')).json().threat_density;
    expect(d.threat_ipv4_addresses).toBeGreaterThanOrEqual(SIGNIFICANT_MIN_ADDRESSES);
    expect(d.ratio).toBeLessThan(SIGNIFICANT_RATIO);
    expect(d.significant).toBe(false);
  });

  test('ratio, percent and significant agree with the counts and the documented threshold', async () => {
    for (const asn of [15169, 210558, 12576, 14061, 932, 13335, 16509]) {
      const d = (await call(server.url, `/v1/asn/AS${asn}`)).json().threat_density;
      const ratio = d.total_ipv4_addresses > 0 ? d.threat_ipv4_addresses / d.total_ipv4_addresses : 0;
      expect(d.ratio).toBeCloseTo(ratio, 6);
      expect(d.percent).toBeCloseTo(ratio * 100, 2);
      expect(d.significant).toBe(ratio >= SIGNIFICANT_RATIO && d.threat_ipv4_addresses >= SIGNIFICANT_MIN_ADDRESSES);
    }
  });

  testWithShared('an ASN on the real ASN-DROP list carries its asndrop context', () => onRealIndex(async (url) => {
    const b = (await call(url, '/v1/asn/AS932')).json();
    expect(b.asndrop).toEqual({ asn: 'AS932', as_name: 'XNNET', rir: 'arin', domain: 'xn.net', country_code: 'US' });
  }), 120_000);

  test('a valid ASN the index does not know is 200 with null name and zero density', async () => {
    const a = await call(server.url, '/v1/asn/AS4294967295');
    expect(a.status).toBe(200);
    const b = a.json();
    expect(b.name).toBeNull();
    expect(b.threat_density).toMatchObject({ total_ipv4_addresses: 0, ratio: 0, significant: false });
  });

  test('the alias /asn/{asn} gives the identical body and headers', async () => {
    for (const asn of ['AS15169', 'AS932', 'AS210558', 'AS4294967295']) {
      const v1 = await call(server.url, `/v1/asn/${asn}`);
      const alias = await call(server.url, `/asn/${asn}`);
      expect(alias.status).toBe(200);
      expect(alias.text).toBe(v1.text);
      expect(alias.headers.get('cache-control')).toBe(v1.headers.get('cache-control'));
      expect(alias.headers.get('content-type')).toBe(v1.headers.get('content-type'));
    }
  });
});

describe('ASN syntax: AS<1..4294967295>, the AS prefix case-insensitive (docs/http.md)', () => {
  test('as15169 and As15169 answer as AS15169', async () => {
    const canonical = (await call(server.url, '/v1/asn/AS15169')).text;
    for (const v of ['as15169', 'As15169', 'aS15169']) {
      const a = await call(server.url, `/v1/asn/${v}`);
      expect(a.status).toBe(200);
      expect(a.text).toBe(canonical);
    }
  });

  const bad = ['15169', 'AS', 'AS0', 'AS00', 'AS015169', 'AS4294967296', 'AS99999999999', 'AS-1', 'AS+1', 'AS1.5', 'AS1e3', 'AS 1', 'ASN15169', 'AS15169x', 'XAS1', 'AS١٢٣'];
  for (const v of bad) {
    test(`INVALID_ASN: ${JSON.stringify(v)}`, async () => {
      for (const prefix of ['/v1/asn/', '/asn/']) {
        const d = expectError(await call(server.url, prefix + encodeURIComponent(v)), 400, 'INVALID_ASN');
        expect(d.provided).toBe(v);
      }
    });
  }
});

describe('radar enrichment', () => {
  test('the envelope result is returned, with the bearer token, and cached', async () => {
    radarRequests.length = 0;
    const first = (await call(withRadar.url, '/v1/asn/AS13335')).json();
    expect(first.radar).toEqual({ asn: 13335, name: 'CLOUDFLARENET', country: 'US' });
    expect(first.name).toBe('Cloudflare'); // the local name stays the local one
    const second = (await call(withRadar.url, '/asn/AS13335')).json();
    expect(second).toEqual(first);
    expect(radarRequests).toEqual([{ path: '/asn/13335/info', auth: 'Bearer radar-token' }]);
  });

  test('an error answer gives radar null and the local data still', async () => {
    const b = (await call(withRadar.url, '/v1/asn/AS666')).json();
    expect(b.radar).toBeNull();
    expect(b.threat_density).toBeDefined();
  });

  test('an unknown ASN at the enrichment (404) gives radar null', async () => {
    expect((await call(withRadar.url, '/v1/asn/AS15169')).json().radar).toBeNull();
  });

  test('a hanging endpoint gives radar null (short timeout), still 200', async () => {
    const a = await call(withRadar.url, '/v1/asn/AS999');
    expect(a.status).toBe(200);
    expect(a.json().radar).toBeNull();
  }, 10_000);

  test('an unreachable endpoint gives radar null', async () => {
    const client = createRadarClient({ url: 'http://127.0.0.1:9/asn', token: null, timeoutMs: 500 });
    expect(await client.lookup(1, 'ip:127.0.0.1')).toBeNull();
  });
});
