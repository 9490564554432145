/**
 * Issue 16 on a thin index (as the embedded default is: no routing, no Tor
 * list newer than years, no threat lists): an absent layer gives no signal,
 * no risk and no claim; a stale one is shown stale and weighs less; the
 * public data status lists every kind with its state, source count and age.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { loadManifest } from '../../index-builder/manifest.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { SIGNALS } from '../../src/scoring/signals.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { call, NO_LIMITS } from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'coverage-http-'));
const TOR_EXIT = '185.220.101.1';
let server: RunningServer;

beforeAll(async () => {
  // ASN ranges only, and a Tor exit list last published in 2020.
  await Bun.write(join(dir, 'asn.csv'), ['8.8.8.0,8.8.8.255,15169,GOOGLE', '185.220.101.0,185.220.101.255,60729,ZWIEBELFREUNDE'].join('\n') + '\n');
  await Bun.write(join(dir, 'exit-addresses'), ['ExitNode 0011', 'Published 2020-01-01 00:00:00', 'LastStatus 2020-01-01 12:00:00', `ExitAddress ${TOR_EXIT} 2020-01-01 12:00:00`].join('\n') + '\n');
  await Bun.write(join(dir, 'feeds.json'), JSON.stringify({ sources: [{ type: 'asn-csv', path: 'asn.csv' }, { type: 'tor-exits', path: 'exit-addresses' }] }));
  await buildIndex({ sources: loadManifest(join(dir, 'feeds.json')), out: join(dir, 'thin.idx'), quiet: true });
  server = await startTestServer({ ...NO_LIMITS, IPINTEL_INDEX: join(dir, 'thin.idx') });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('data status on a thin index', () => {
  test('every kind with its state, source count and age; the years-old Tor list is stale', async () => {
    const b = (await call(server.url, '/v1/data/status')).json();
    expect(b.capabilities).toMatchObject({ tor: 'stale', asn: 'ready', routing: 'unavailable', threat: 'unavailable', vpn: 'unavailable', bogons: 'unavailable' });
    expect(b.coverage.tor.state).toBe('stale');
    expect(b.coverage.tor.sources).toBe(1);
    // Dated by the file's LastStatus line, not by the build or the file's mtime.
    const age = (Date.now() - Date.parse('2020-01-01T12:00:00Z')) / 1000;
    expect(Math.abs(b.coverage.tor.age_seconds - age)).toBeLessThan(600);
    expect(b.coverage.tor.stale_after_seconds).toBe(86400);
    expect(b.coverage.routing).toEqual({ state: 'unavailable', sources: 0, age_seconds: null, stale_after_seconds: 14 * 86400 });
    expect(Object.keys(b.coverage)).toContain('network_type');
  });
});

describe('lookups on a thin index', () => {
  test('an ordinary address: no unrouted_address without routing data, base risk, threat level Unknown, unknowns stated', async () => {
    const b = (await call(server.url, '/v1/ip/8.8.8.8')).json();
    expect(b.evidence.signals.map((s: { label: string }) => s.label)).toEqual([]);
    // The evidence says what it could not speak to.
    expect(b.evidence.unavailable).toEqual(['routing', 'rpki', 'bogons', 'vpn', 'proxy', 'relays', 'crawlers', 'datacenter', 'threat', 'network_type']);
    expect(b.evidence.stale).toEqual(['tor']);
    expect(b.score.risk_score).toBe(10);
    expect(b.classification.is_tor).toBe(false);
    expect(b.classification.threat_level).toBe('Unknown');
    expect(b.classification.confidence).toBe('low');
    expect(b.scores.routing_risk_score).toBe(0);
    expect(b.explanation.summary).toContain('No VPN, proxy, privacy relay, threat, cloud/hosting, crawler, routing or bogon data loaded; Tor data stale.');
  });

  test('an address no loaded layer knows: its routability is unknown, not "unannounced"', async () => {
    const b = (await call(server.url, '/v1/ip/9.9.9.9')).json();
    expect(b.network.routability).toEqual({ status: 'unknown', globally_reachable: null, reason: 'No routing data for both address families: whether the address is announced is not known' });
    expect(b.evidence.signals).toEqual([]);
    const routed = (await call(server.url, '/v1/ip/9.9.9.9?fields=network')).json();
    expect(routed.network.routability).toEqual(b.network.routability);
  });

  test('the same answer through the fast path and the framework route', async () => {
    const fast = (await call(server.url, '/v1/ip/8.8.8.8')).json();
    const routed = (await call(server.url, '/v1/ip/8.8.8.8?fields=evidence,classification,score,explanation')).json();
    expect(routed).toEqual({ evidence: fast.evidence, classification: fast.classification, score: fast.score, explanation: fast.explanation });
  });

  test("a stale Tor list's exit: still named, one level less confident, half the weight", async () => {
    const b = (await call(server.url, `/v1/ip/${TOR_EXIT}`)).json();
    expect(b.classification.is_tor).toBe(true);
    const signal = b.evidence.signals.find((s: { label: string }) => s.label === 'tor_exit');
    expect(signal.confidence).toBe('medium');
    const driver = b.explanation.drivers.find((d: { label: string }) => d.label === 'tor_exit');
    expect(driver.impact_score).toBe(Math.trunc(SIGNALS.tor_exit.weight / 2));
    expect(b.score.risk_score).toBe(10 + Math.trunc(SIGNALS.tor_exit.weight / 2));
  });
});
