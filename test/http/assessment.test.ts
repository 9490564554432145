/**
 * GET /v1/assessment (spec 4.2, 4.9): each address and the pair, explicit
 * or auto (caller IP), its own shape with no `fields`, INVALID_IP per
 * parameter, Cache-Control by mode.
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

const STACK_KEYS = ['ip', 'country_code', 'asn', 'org', 'usage_type', 'is_datacenter', 'is_vpn', 'is_proxy', 'is_tor', 'is_privacy_relay', 'score', 'unavailable', 'stale'].sort();
const PAIR_KEYS = ['same_asn', 'same_org', 'same_country', 'any_datacenter', 'any_vpn', 'any_proxy', 'any_tor', 'any_privacy_relay', 'consistent', 'combined'].sort();

// Real DigitalOcean geofeed rows: 5.101.96.0/21 and 2a03:b0c0:0:108::/64 are Amsterdam, 2400:6180:0:d0::/64 Singapore.
const DO_V4_NL = '5.101.96.10';
const DO_V6_NL = '2a03:b0c0:0:108::10';
const DO_V6_SG = '2400:6180:0:d0::10';

describe('what each stack cannot tell', () => {
  test('each family carries the kinds not loaded and those stale, as the v1 evidence does', async () => {
    const b = (await call(server.url, `/v1/assessment?ipv4=${DO_V4_NL}&ipv6=${DO_V6_NL}`)).json();
    for (const stack of [b.ipv4, b.ipv6]) {
      const v1 = (await call(server.url, `/v1/ip/${stack.ip}`)).json();
      expect(v1.evidence.unavailable.length).toBeGreaterThan(0);
      expect(stack.unavailable).toEqual(v1.evidence.unavailable);
      expect(stack.stale).toEqual(v1.evidence.stale);
    }
  });
});

describe('explicit pairs', () => {
  test('same country, both datacenter: consistent, public cache', async () => {
    const a = await call(server.url, `/v1/assessment?ipv4=${DO_V4_NL}&ipv6=${DO_V6_NL}`);
    expect(a.status).toBe(200);
    expect(a.headers.get('cache-control')).toBe('public, max-age=86400');
    const b = a.json();
    expect(b.mode).toBe('explicit');
    // The fixture index lacks some kinds (e.g. rpki) and holds some stale (its routing snapshot): both lists show.
    expect(Object.keys(b.ipv4).sort()).toEqual(STACK_KEYS);
    expect(Object.keys(b.ipv6).sort()).toEqual(STACK_KEYS);
    expect(Object.keys(b.pair).sort()).toEqual(PAIR_KEYS);
    expect(b.ipv4.ip).toBe(DO_V4_NL);
    expect(b.ipv6.ip).toBe(DO_V6_NL);
    expect(b.ipv4.country_code).toBe('NL');
    expect(b.ipv6.country_code).toBe('NL');
    expect(b.pair.same_country).toBe(true);
    expect(b.pair.any_datacenter).toBe(true);
    expect(b.pair.any_tor).toBe(false);
    expect(b.pair.consistent).not.toBe(false);
    expect(b.pair.combined.risk_score).toBe(Math.max(b.ipv4.score.risk_score, b.ipv6.score.risk_score));
  });

  test('different countries: same_country false, a reason, never a plain allow', async () => {
    const b = (await call(server.url, `/v1/assessment?ipv4=${DO_V4_NL}&ipv6=${DO_V6_SG}`)).json();
    expect(b.pair.same_country).toBe(false);
    expect(b.pair.consistent).toBe(false);
    expect(b.pair.combined.reasons.join(' ')).toContain('different countries');
    expect(b.pair.combined.verdict).not.toBe('allow');
  });

  test('a Tor exit on either stack shows in the pair', async () => {
    const b = (await call(server.url, `/v1/assessment?ipv4=185.220.101.1&ipv6=${DO_V6_NL}`)).json();
    expect(b.ipv4.is_tor).toBe(true);
    expect(b.pair.any_tor).toBe(true);
    expect(b.pair.combined.reasons.some((r: string) => r.includes('185.220.101.1') && r.includes('Tor'))).toBe(true);
  });

  test('unknown data compares as null, not as a mismatch', async () => {
    // No IPv6 routing data in the fixture: the IPv6 ASN is unknown, so same_asn cannot be decided.
    const b = (await call(server.url, `/v1/assessment?ipv4=${DO_V4_NL}&ipv6=${DO_V6_NL}`)).json();
    expect(b.ipv6.asn).toBeNull();
    expect(b.pair.same_asn).toBeNull();
  });

  test('one stack only: the other is null and pair comparisons are null', async () => {
    for (const q of [`ipv4=${DO_V4_NL}`, `ipv6=${DO_V6_NL}`]) {
      const b = (await call(server.url, `/v1/assessment?${q}`)).json();
      expect(b.mode).toBe('explicit');
      expect(q.startsWith('ipv4') ? b.ipv6 : b.ipv4).toBeNull();
      expect(b.pair.same_asn).toBeNull();
      expect(b.pair.same_country).toBeNull();
      expect(b.pair.consistent).toBeNull();
      expect(b.pair.any_datacenter).toBe(true);
    }
  });

  test('an IPv4-mapped address is accepted as ipv4', async () => {
    const b = (await call(server.url, `/v1/assessment?ipv4=::ffff:${DO_V4_NL}`)).json();
    expect(b.ipv4.ip).toBe(DO_V4_NL);
  });

  test('fields is not supported: the shape stays whole', async () => {
    const b = (await call(server.url, `/v1/assessment?ipv4=${DO_V4_NL}&fields=ip`)).json();
    expect(Object.keys(b).sort()).toEqual(['ipv4', 'ipv6', 'mode', 'pair']);
  });
});

describe('errors', () => {
  const cases: Array<[string, string]> = [
    ['ipv4=2001:db8::1', 'ipv4'],
    ['ipv6=8.8.8.8', 'ipv6'],
    ['ipv4=999.1.1.1', 'ipv4'],
    ['ipv4=', 'ipv4'],
    [`ipv4=${DO_V4_NL}&ipv6=nope`, 'ipv6'],
  ];
  for (const [q, param] of cases) {
    test(q, async () => {
      const d = expectError(await call(server.url, `/v1/assessment?${q}`), 400, 'INVALID_IP');
      expect(typeof d.provided).toBe('string');
      if (d.parameter !== undefined) expect(d.parameter).toBe(param);
    });
  }

  test('a repeated ipv4 parameter is refused, not silently reduced to one', async () => {
    const d = expectError(await call(server.url, `/v1/assessment?ipv4=${DO_V4_NL}&ipv4=8.8.8.8`), 400, 'INVALID_IP');
    expect(d.parameter).toBe('ipv4');
  });
});

describe('auto mode', () => {
  test('the caller IP, no-store', async () => {
    const a = await call(server.url, '/v1/assessment');
    expect(a.status).toBe(200);
    expect(a.headers.get('cache-control')).toBe('no-store');
    const b = a.json();
    expect(b.mode).toBe('auto');
    expect(b.ipv4.ip).toBe('127.0.0.1');
    expect(b.ipv6).toBeNull();
  });
});
