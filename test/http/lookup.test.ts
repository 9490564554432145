/**
 * GET /v1/ip/{ip} and /v1/ip/current (spec 2.1, 4.1, 4.9): the full v1
 * object, IPv4/IPv6/IPv4-mapped input, special-use addresses answered with
 * their routability, missing data as null, INVALID_IP and NO_CLIENT_IP.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { call, expectError, NO_LIMITS } from './support.ts';

let server: RunningServer;
beforeAll(async () => {
  server = await startTestServer(NO_LIMITS);
}, 120_000);
afterAll(() => server.stop());

const TOP_LEVEL = ['ip', 'stack', 'location', 'network', 'routing', 'score', 'classification', 'evidence', 'decision', 'scores', 'scenarios', 'explanation'];

describe('the full v1 object (spec 2.1, 2.2, 4.1 rule 6)', () => {
  test('a located datacenter address has every top-level field with the spec types', async () => {
    const a = await call(server.url, '/v1/ip/5.101.96.10');
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toContain('application/json');
    const b = a.json();
    expect(Object.keys(b)).toEqual(TOP_LEVEL);
    expect(b.ip).toBe('5.101.96.10');
    expect(b.stack).toBe('ipv4');
    // Location from the real DigitalOcean geofeed row 5.101.96.0/21,NL,NL-NH,Amsterdam.
    expect(b.location).toMatchObject({ country: 'Netherlands', country_code: 'NL', region: 'Noord-Holland', city: 'Amsterdam' });
    // The geofeed has no time zone: null, not an invented one.
    expect(b.location.timezone).toBeNull();
    expect(b.network.asn).toMatch(/^AS\d+$/);
    expect(typeof b.network.org).toBe('string');
    expect(b.network.allocation).toMatchObject({ cidr: expect.stringMatching(/\/\d+$/), range: expect.stringMatching(/^\S+ - \S+$/), registry: expect.any(String) });
    expect(b.network.routability.globally_reachable).toBe(true);
    expect(b.network.is_special_use).toBe(false);
    expect(b.network.is_bogon).toBe(false);
    expect(b.routing.origin_asn).toMatch(/^AS\d+$/);
    expect(b.routing.prefix).toMatch(/^[\d.]+\/\d+$/);
    expect(['low', 'medium', 'high']).toContain(b.routing.confidence);
    expect(typeof b.routing.origin_conflict).toBe('boolean');
    expect(typeof b.routing.rpki_status).toBe('string');
    expect(Number.isInteger(b.score.ip_score)).toBe(true);
    expect(b.score.ip_score + b.score.risk_score).toBe(100);
    for (const k of ['band', 'verdict', 'recommended_action']) expect(typeof b.score[k]).toBe('string');
    for (const k of ['is_datacenter', 'is_proxy', 'is_privacy_relay', 'is_known_crawler', 'is_verified_crawler', 'is_mobile', 'is_vpn', 'is_tor']) {
      expect(typeof b.classification[k]).toBe('boolean');
    }
    expect(b.classification.is_datacenter).toBe(true);
    expect(Array.isArray(b.classification.traits)).toBe(true);
    for (const s of b.evidence.signals) expect(Object.keys(s).sort()).toEqual(['category', 'confidence', 'description', 'label', 'severity']);
    expect(typeof b.decision.policy_version).toBe('string');
    expect(Object.keys(b.scores).sort()).toEqual(
      ['abuse_score', 'anonymity_score', 'base_risk_score', 'evidence_quality_score', 'infrastructure_score', 'risk_score', 'routing_risk_score', 'trust_score'],
    );
    expect(Object.keys(b.scenarios).sort()).toEqual(['api', 'content', 'login', 'payment', 'seo_crawler', 'signup']);
    expect(typeof b.explanation.summary).toBe('string');
  });

  test('missing data is null, never invented: an unrouted address without geo or ASN', async () => {
    const b = (await call(server.url, '/v1/ip/1.2.3.4')).json();
    expect(b.location).toBeNull();
    expect(b.network.asn).toBeNull();
    expect(b.network.org).toBeNull();
    expect(b.network.owner).toBeNull();
    expect(b.routing.origin_asn).toBeNull();
    expect(b.routing.prefix).toBeNull();
    // The allocation is known (real APNIC delegated file) and is given.
    expect(b.network.allocation.registry).toBe('apnic');
  });

  test('a Tor exit and a threat-feed C2 from the real lists are classified from them', async () => {
    expect((await call(server.url, '/v1/ip/185.220.101.1')).json().classification.is_tor).toBe(true);
    const c2 = (await call(server.url, '/v1/ip/192.9.135.73')).json();
    expect(c2.evidence.signals.map((s: { label: string }) => s.label)).toContain('threat_list_hit');
  });
});

describe('address families', () => {
  test('an IPv6 address answers with stack ipv6 and its canonical text', async () => {
    const a = await call(server.url, '/v1/ip/2001:4860:4801:0010:0:0:0:0001');
    expect(a.status).toBe(200);
    const b = a.json();
    expect(b.ip).toBe('2001:4860:4801:10::1');
    expect(b.stack).toBe('ipv6');
    // Googlebot's published IPv6 range: a known crawler; DNS proof is unreachable here, so not verified.
    expect(b.classification.is_known_crawler).toBe(true);
    expect(b.classification.is_verified_crawler).toBe(false);
  });

  test('upper-case IPv6 text is accepted', async () => {
    const a = await call(server.url, '/v1/ip/2001:4860:4801:10::ABCD?fields=ip,stack');
    expect(a.json()).toEqual({ ip: '2001:4860:4801:10::abcd', stack: 'ipv6' });
  });

  test('an IPv4-mapped IPv6 address is answered as its IPv4 address', async () => {
    const mapped = (await call(server.url, '/v1/ip/::ffff:5.101.96.10')).json();
    const plain = (await call(server.url, '/v1/ip/5.101.96.10')).json();
    expect(mapped.ip).toBe('5.101.96.10');
    expect(mapped.stack).toBe('ipv4');
    expect(mapped).toEqual(plain);
  });
});

describe('special-use and private addresses answer 200 with their routability explained', () => {
  const cases: Array<[string, string]> = [
    ['10.0.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['192.0.2.1', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['0.0.0.0', 'unspecified'],
    ['169.254.10.10', ''],
    ['100.64.0.1', ''],
    ['fe80::1', ''],
    ['fc00::1', ''],
  ];
  for (const [ip, status] of cases) {
    test(ip, async () => {
      const a = await call(server.url, `/v1/ip/${ip}?fields=ip,network`);
      expect(a.status).toBe(200);
      const n = a.json().network;
      expect(n.is_special_use).toBe(true);
      expect(n.routability.globally_reachable).toBe(false);
      expect(n.routability.reason.length).toBeGreaterThan(10);
      if (status) expect(n.routability.status).toBe(status);
      else expect(n.routability.status).not.toBe('global');
    });
  }
});

describe('INVALID_IP (spec 4.1, 7): details.provided holds the given text', () => {
  const bad = ['999.1.1.1', '1.2.3', '1.2.3.4.5', 'example.com', '1.2.3.04x', ':::', '1::2::3', '2001:db8::g', '-1.0.0.0', '1.2.3.4 ', '01.2.3.4x', 'abc'];
  for (const text of bad) {
    test(JSON.stringify(text), async () => {
      const d = expectError(await call(server.url, `/v1/ip/${encodeURIComponent(text)}`), 400, 'INVALID_IP');
      expect(d.provided).toBe(text);
    });
  }
});

describe('/v1/ip/current', () => {
  test('looks up the socket address with Cache-Control no-store', async () => {
    const a = await call(server.url, '/v1/ip/current?fields=ip,stack');
    expect(a.status).toBe(200);
    expect(a.json()).toEqual({ ip: '127.0.0.1', stack: 'ipv4' });
    expect(a.headers.get('cache-control')).toBe('no-store');
  });

  test('the same fields and include rules apply', async () => {
    expectError(await call(server.url, '/v1/ip/current?fields=nope'), 400, 'INVALID_FIELDS');
    expectError(await call(server.url, '/v1/ip/current?include=nope'), 400, 'INVALID_INCLUDE');
    expectError(await call(server.url, '/v1/ip/current?include=rdap_contacts'), 403, 'PRO_REQUIRED');
  });

  test('without X-Forwarded-For trust, a forwarded address is ignored', async () => {
    const a = await call(server.url, '/v1/ip/current?fields=ip', { headers: { 'x-forwarded-for': '8.8.8.8' } });
    expect(a.json().ip).toBe('127.0.0.1');
  });
});

describe('versioning (spec 9, 2.2)', () => {
  test('decision objects are additive: score and classification are the same with or without them', async () => {
    for (const ip of ['8.8.8.8', '185.220.101.1', '5.101.96.10', '10.0.0.1', '192.9.135.73', '2001:4860:4801:10::1']) {
      const full = (await call(server.url, `/v1/ip/${ip}`)).json();
      const bare = (await call(server.url, `/v1/ip/${ip}?fields=score,classification,evidence`)).json();
      const expected: Record<string, unknown> = { ip, ...bare };
      const actual: Record<string, unknown> = { ip, score: full.score, classification: full.classification, evidence: full.evidence };
      expect(actual).toEqual(expected);
      expect(full.decision.policy_version).toBe(server.services.policy.current.policy_version);
    }
  });
});
