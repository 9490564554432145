/**
 * `fields` and `include` of spec 4.1 rules 1-6, over HTTP: the allowed set,
 * INVALID_FIELDS / INVALID_INCLUDE / PRO_REQUIRED with their details, the
 * Pro RDAP object from a real RDAP file served on loopback, no contact data
 * in free or anonymous bodies, and projection computing only what is asked.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { createCrawlerVerifier, type CrawlerVerifier } from '../../src/crawlers/verifier.ts';
import { containsRdapContactData, type RdapResult } from '../../src/rdap/index.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { startMockRdap, type MockRdapServer } from '../rdap/rdap-feeds.ts';
import { call, expectError, NO_LIMITS } from './support.ts';

const V1_FIELDS = ['ip', 'stack', 'location', 'network', 'routing', 'score', 'classification', 'evidence', 'decision', 'scores', 'scenarios', 'explanation'];

let server: RunningServer;
let rdap: MockRdapServer;
let pro: string;
let free: string;
const proofCalls: string[] = [];

beforeAll(async () => {
  rdap = startMockRdap();
  const real = createCrawlerVerifier({ dnsServers: ['127.0.0.1:9'] });
  // Counts DNS proof starts, to show a projection without classification never asks for one.
  const counting: CrawlerVerifier = {
    verify: (i) => real.verify(i),
    proofFor: (ip) => real.proofFor(ip),
    startProof: (hit, budget) => {
      proofCalls.push(hit.ip);
      return real.startProof(hit, budget);
    },
  };
  server = await startTestServer({ ...NO_LIMITS, IPINTEL_RDAP_BASE: rdap.base }, { crawlers: counting });
  pro = (await server.services.accounts.grantKeyByEmail('pro@example.com', 'pro', 'test')).created.secret;
  free = (await server.services.accounts.grantKeyByEmail('free@example.com', 'free', 'test')).created.secret;
}, 120_000);
afterAll(async () => {
  await server.stop();
  rdap.stop();
});

const asPro = () => ({ headers: { 'x-api-key': pro } });

describe('rule 1: fields selects top-level fields, nested ones untouched', () => {
  test('only the requested fields, each identical to the full object', async () => {
    const full = (await call(server.url, '/v1/ip/5.101.96.10')).json();
    const a = await call(server.url, '/v1/ip/5.101.96.10?fields=location,ip,routing');
    expect(a.status).toBe(200);
    const b = a.json();
    expect(Object.keys(b).sort()).toEqual(['ip', 'location', 'routing']);
    expect(b.location).toEqual(full.location);
    expect(b.routing).toEqual(full.routing);
  });

  test('every single allowed field can be asked for alone', async () => {
    const full = (await call(server.url, '/v1/ip/185.220.101.1')).json();
    for (const f of V1_FIELDS) {
      const b = (await call(server.url, `/v1/ip/185.220.101.1?fields=${f}`)).json();
      expect(b).toEqual({ [f]: full[f] });
    }
  });

  test('spaces around names and repeated names are accepted', async () => {
    const b = (await call(server.url, '/v1/ip/8.8.8.8?fields=%20ip%20,stack,ip')).json();
    expect(b).toEqual({ ip: '8.8.8.8', stack: 'ipv4' });
  });

  test('a repeated fields parameter is one list, not "the last one wins"', async () => {
    const b = (await call(server.url, '/v1/ip/8.8.8.8?fields=ip&fields=stack')).json();
    expect(b).toEqual({ ip: '8.8.8.8', stack: 'ipv4' });
  });
});

describe('rule 2: INVALID_FIELDS', () => {
  const cases: Array<[string, string[]]> = [
    ['fields=', ['']],
    ['fields=,', ['']],
    ['fields=ip,bogus', ['bogus']],
    ['fields=IP', ['IP']],
    ['fields=rdap', ['rdap']],
    ['fields=ip,network.asn,x', ['network.asn', 'x']],
  ];
  for (const [q, invalid] of cases) {
    test(q, async () => {
      const d = expectError(await call(server.url, `/v1/ip/8.8.8.8?${q}`), 400, 'INVALID_FIELDS');
      expect(d.allowed_fields).toEqual(V1_FIELDS);
      expect(d.invalid_fields).toEqual(invalid);
    });
  }

  test('with an accepted RDAP include, rdap is appended to allowed_fields', async () => {
    const d = expectError(await call(server.url, '/v1/ip/1.1.1.1?include=rdap_contacts&fields=ip,bogus', asPro()), 400, 'INVALID_FIELDS');
    expect(d.allowed_fields).toEqual([...V1_FIELDS, 'rdap']);
    expect(d.invalid_fields).toEqual(['bogus']);
  });
});

describe('rule 3: INVALID_INCLUDE', () => {
  for (const q of ['include=foo', 'include=', 'include=rdap_contacts,foo', 'include=RDAP_CONTACTS']) {
    test(q, async () => {
      const d = expectError(await call(server.url, `/v1/ip/8.8.8.8?${q}`, asPro()), 400, 'INVALID_INCLUDE');
      expect(typeof d).toBe('object');
    });
  }
});

describe('rule 4: PRO_REQUIRED without a Pro key', () => {
  const callers: Array<[string, () => Record<string, string>]> = [
    ['anonymous', () => ({})],
    ['a free key', () => ({ 'x-api-key': free })],
  ];
  for (const [who, headers] of callers) {
    test(who, async () => {
      const d = expectError(await call(server.url, '/v1/ip/1.1.1.1?include=rdap_contacts', { headers: headers() }), 403, 'PRO_REQUIRED');
      expect(d.include).toEqual(['rdap_contacts']);
      expect(Array.isArray(d.allowed_includes)).toBe(true);
      expect(d.allowed_includes).not.toContain('rdap_contacts');
    });
  }

  test('an invalid key is 401 INVALID_API_KEY, before any include check', async () => {
    expectError(await call(server.url, '/v1/ip/1.1.1.1?include=rdap_contacts', { headers: { 'x-api-key': 'not-a-key' } }), 401, 'INVALID_API_KEY');
  });
});

describe('rule 5: a Pro key with include=rdap_contacts', () => {
  test('adds the normalized RDAP object (real ARIN/APNIC answer for 1.1.1.1), no-store', async () => {
    const a = await call(server.url, '/v1/ip/1.1.1.1?include=rdap_contacts', asPro());
    expect(a.status).toBe(200);
    expect(a.headers.get('cache-control')).toBe('no-store');
    const b = a.json();
    expect(Object.keys(b)).toEqual([...V1_FIELDS, 'rdap']);
    expect(b.rdap.available).toBe(true);
    expect(Object.keys(b.rdap.network).sort()).toEqual(['allocation', 'handle', 'name', 'registered_owner', 'registry']);
    expect(Array.isArray(b.rdap.contacts)).toBe(true);
    expect(b.rdap.contacts.length).toBeGreaterThan(0);
    for (const c of b.rdap.contacts) {
      expect(Array.isArray(c.roles)).toBe(true);
      expect(typeof c.name).toBe('string');
    }
  });

  test('fields=rdap,ip returns only those two', async () => {
    const b = (await call(server.url, '/v1/ip/1.1.1.1?include=rdap_contacts&fields=rdap,ip', asPro())).json();
    expect(Object.keys(b).sort()).toEqual(['ip', 'rdap']);
    expect(b.rdap.available).toBe(true);
  });

  test('fields without rdap leave the RDAP object out (and still no-store)', async () => {
    const a = await call(server.url, '/v1/ip/1.1.1.1?include=rdap_contacts&fields=ip', asPro());
    expect(a.json()).toEqual({ ip: '1.1.1.1' });
    expect(a.headers.get('cache-control')).toBe('no-store');
  });

  test('a Pro key without the include gets no rdap field and a public cache', async () => {
    const a = await call(server.url, '/v1/ip/1.1.1.1', asPro());
    expect(Object.keys(a.json())).toEqual(V1_FIELDS);
    expect(a.headers.get('cache-control')).toBe('public, max-age=86400');
  });

  test('free and anonymous bodies never carry the contact data the Pro body had', async () => {
    const proBody = (await call(server.url, '/v1/ip/1.1.1.1?include=rdap_contacts', asPro())).json();
    const result = proBody.rdap as RdapResult;
    // The scan is meaningful: the Pro body itself does contain contact data.
    expect(containsRdapContactData(JSON.stringify(proBody), result)).toBe(true);
    for (const init of [{}, { headers: { 'x-api-key': free } }]) {
      for (const path of ['/v1/ip/1.1.1.1', '/1.1.1.1', '/1.1.1.1?format=text&detail=1', '/v1/assessment?ipv4=1.1.1.1']) {
        const a = await call(server.url, path, init);
        expect(a.status).toBe(200);
        expect(containsRdapContactData(a.text, result)).toBe(false);
      }
    }
  });
});

describe('projection computes only what is asked for', () => {
  // 2001:4860:4801:10::1 is in Googlebot's published range, so classification starts a DNS proof.
  test('fields without classification-derived objects start no crawler DNS proof', async () => {
    proofCalls.length = 0;
    const a = await call(server.url, '/v1/ip/2001:4860:4801:10::1?fields=ip,stack,location,routing');
    expect(a.status).toBe(200);
    expect(proofCalls).toEqual([]);
  });

  test('fields with classification do start it', async () => {
    proofCalls.length = 0;
    await call(server.url, '/v1/ip/2001:4860:4801:10::1?fields=classification');
    expect(proofCalls).toEqual(['2001:4860:4801:10::1']);
  });
});
