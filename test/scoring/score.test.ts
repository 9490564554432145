/** Signal rules, weights, caps and the score bands. */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { Flag } from '../../src/index/record.ts';
import {
  BASE_RISK,
  CATEGORY_CAPS,
  DEFAULT_POLICY,
  SIGNALS,
  SIGNAL_LABELS,
  assessRecord,
  classify,
  collectEvidence,
  computeScore,
  scoreFromRisk,
  traceScore,
} from '../../src/scoring/index.ts';
import { NO_PROOF, baseRecord, route } from './fixtures.ts';

const labelsOf = (flags: number, over = {}) => {
  const r = baseRecord({ flags, ...over });
  return collectEvidence(r, classify(r, NO_PROOF)).signals.map((s) => s.label);
};

describe('signals', () => {
  test('a DROP listing that is also on the botnet feed is capped within the threat category', () => {
    const r = baseRecord({ flags: Flag.DROP | Flag.THREAT_FEED });
    const t = traceScore(collectEvidence(r, classify(r, NO_PROOF)));
    expect(t.contributions.map((c) => [c.label, c.effective])).toEqual([
      ['hijacked_netblock', 70],
      ['threat_list_hit', CATEGORY_CAPS.threat.max - 70],
    ]);
    expect(t.score.risk_score).toBe(BASE_RISK + CATEGORY_CAPS.threat.max);
  });

  test('the threat-feed sidecar raises threat_list_hit once and carries its metadata', () => {
    const r = baseRecord({
      flags: Flag.THREAT_FEED,
      threatFeed: { malware: 'Pikabot', firstSeen: '2023-05-23 17:51:44', lastSeen: '2024-04-01', port: 1194, status: 'online' },
    });
    const ev = collectEvidence(r, classify(r, NO_PROOF));
    expect(ev.signals.map((s) => s.label)).toEqual(['threat_list_hit']);
    expect(ev.threat_feed).toEqual({ malware: 'Pikabot', first_seen: '2023-05-23 17:51:44', last_seen: '2024-04-01' });
    expect(computeScore(ev).risk_score).toBe(BASE_RISK + SIGNALS.threat_list_hit.weight);
  });

  test('ASN-DROP is evidence only: a zero-weight signal that leaves risk_score unchanged', () => {
    expect(labelsOf(Flag.ASN_DROP)).toEqual(['asn_drop_listed']);
    const plain = baseRecord();
    const listed = baseRecord({ flags: Flag.ASN_DROP });
    const score = (r: typeof plain) => computeScore(collectEvidence(r, classify(r, NO_PROOF)));
    expect(score(listed)).toEqual(score(plain));
    expect(SIGNALS.asn_drop_listed.weight).toBe(0);
  });

  test('ASN-level matches only count when no range list matched', () => {
    expect(labelsOf(Flag.VPN_ASN)).toEqual(['vpn_network']);
    expect(labelsOf(Flag.VPN_ASN | Flag.VPN)).toEqual(['vpn_range']);
    expect(labelsOf(Flag.DATACENTER_ASN)).toEqual(['hosting_network']);
    expect(labelsOf(Flag.DATACENTER_ASN | Flag.DATACENTER)).toEqual(['datacenter_range']);
  });

  test('routing signals come from the route', () => {
    expect(labelsOf(0, { route: route('192.0.2.0/24', 64500, { rpkiStatus: 'invalid', originConflict: true, origins: [64500, 64501] }) })).toEqual([
      'rpki_invalid',
      'origin_conflict',
    ]);
    expect(labelsOf(0, { route: null })).toEqual(['unrouted_address']);
  });

  test('special-use space: non-global blocks score, globally reachable ones are context only', () => {
    const su = (globallyReachable: boolean) => ({ name: 'x', cidr: '192.0.0.0/24', rfc: 'RFC6890', kind: 'reserved', globallyReachable });
    expect(labelsOf(Flag.SPECIAL_USE, { specialUse: su(false), route: null })).toEqual(['special_use_address']);
    expect(labelsOf(Flag.SPECIAL_USE, { specialUse: su(true) })).toEqual(['special_use_global']);
  });

  test('a known crawler range offsets its datacenter signal, DNS verification lowers risk further', () => {
    const r = baseRecord({ flags: Flag.CRAWLER_RANGE | Flag.DATACENTER, crawler: 'bingbot' });
    const unverified = computeScore(collectEvidence(r, classify(r, NO_PROOF)));
    const ctx = { verifiedCrawler: { key: 'bingbot', hostname: 'msnbot-1.search.msn.com' } };
    const verified = computeScore(collectEvidence(r, classify(r, ctx)));
    const dc = SIGNALS.datacenter_range.weight;
    expect(unverified.risk_score).toBe(BASE_RISK + dc + SIGNALS.known_crawler_range.weight);
    expect(verified.risk_score).toBe(Math.max(0, BASE_RISK + dc + Math.max(CATEGORY_CAPS.crawler.min, SIGNALS.known_crawler_range.weight + SIGNALS.verified_crawler.weight)));
    expect(verified.risk_score).toBeLessThan(unverified.risk_score);
  });

  test('an unregistered label cannot be scored', () => {
    expect(() => traceScore({ signals: [{ category: 'threat', label: 'made_up', severity: 'high', confidence: 'high', description: 'x' }] })).toThrow(
      /unregistered/,
    );
  });
});

describe('score bands', () => {
  test.each([
    [0, 'good', 'allow', 'allow'],
    [19, 'good', 'allow', 'allow'],
    [20, 'fair', 'monitor', 'rate_limit'],
    [44, 'fair', 'monitor', 'rate_limit'],
    [45, 'poor', 'challenge', 'challenge'],
    [69, 'poor', 'challenge', 'challenge'],
    [70, 'bad', 'block', 'block'],
    [100, 'bad', 'block', 'block'],
  ])('risk %d → %s / %s / %s', (risk, band, verdict, action) => {
    expect(scoreFromRisk(risk)).toEqual({ ip_score: 100 - risk, risk_score: risk, band, verdict, recommended_action: action } as never);
  });
});

describe('public texts name no data vendor', () => {
  const VENDORS = /spamhaus|x4b|abuse\.ch|feodo|db-?ip|cymru|maxmind|ipinfo|routeviews|ripe ris|ip-location-db/i;

  test('signal registry', () => {
    for (const label of SIGNAL_LABELS) expect(JSON.stringify(SIGNALS[label])).not.toMatch(VENDORS);
  });

  test('classification, evidence and explanation of a DROP-listed botnet address', () => {
    const r = baseRecord({
      flags: Flag.DROP | Flag.THREAT_FEED | Flag.ASN_DROP,
      threatList: { list: 'spamhaus-drop', reference: 'SBL256894' },
      threatFeed: { malware: 'QakBot', firstSeen: null, lastSeen: null, port: null, status: null },
    });
    const a = assessRecord(r, NO_PROOF, DEFAULT_POLICY);
    const { network, ...rest } = a;
    expect(JSON.stringify(rest)).not.toMatch(VENDORS);
    expect(network.operator).toBe('Comcast Cable Communications, LLC');
  });
});
