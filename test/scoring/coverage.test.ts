/**
 * Scoring under the index's coverage: a kind the index does not hold gives
 * no signal, no risk and no claim; a stale kind's signals weigh half and are
 * one level less confident; the summary says what is unknown.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import { Flag, type IndexRecord } from '../../src/index/record.ts';
import type { IndexMeta, SourceMeta } from '../../src/index/format.ts';
import {
  DEFAULT_POLICY,
  EVIDENCE_KINDS,
  FULL_COVERAGE,
  SIGNALS,
  assessRecord,
  classify,
  collectEvidence,
  coverageNote,
  coverageOf,
  traceScore,
  type Coverage,
  type EvidenceKind,
} from '../../src/scoring/index.ts';
import { ctxArb, recordArb } from './arbitraries.ts';
import { baseRecord } from './fixtures.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-25T00:00:00Z');

/** A META naming these sources (type, kinds, date). */
function meta(sources: Array<{ type: string; kinds: string[]; date: string }>): IndexMeta {
  const held = new Set(sources.flatMap((s) => s.kinds));
  held.add('allocation');
  return {
    formatVersion: 4,
    builtAt: new Date(NOW - DAY).toISOString(),
    builder: 'test',
    sources: sources.map((s): SourceMeta => ({ type: s.type, path: 'x', rows: 1, skipped: 0, bytes: 1, sha256: '', seconds: 0, date: s.date, dateFrom: 'file', kinds: s.kinds })),
    counts: { v4Intervals: 0, v6Intervals: 0, records: 0, strings: 0, tables: {}, asnDetails: 0 },
    hasRpki: false,
    capabilities: Object.fromEntries(EVIDENCE_KINDS.map((k) => [k, held.has(k)])),
    attributions: [],
  };
}

/** Coverage holding exactly `kinds` (fresh), plus the always-built-in allocation. */
function holding(kinds: readonly EvidenceKind[], stale: readonly EvidenceKind[] = []): Coverage {
  const fresh = new Date(NOW - 3_600_000).toISOString();
  const old = new Date(NOW - 400 * DAY).toISOString();
  return coverageOf(meta(kinds.map((k) => ({ type: 't', kinds: [k], date: stale.includes(k) ? old : fresh }))), NOW);
}

/** The facts of a record that only a layer of `kind` could have put there. */
function strip(r: IndexRecord, removed: ReadonlySet<EvidenceKind>): IndexRecord {
  let flags = r.flags;
  const drop = (kind: EvidenceKind, mask: number) => {
    if (removed.has(kind)) flags &= ~mask;
  };
  drop('tor', Flag.TOR_EXIT);
  drop('vpn', Flag.VPN | Flag.VPN_ASN);
  drop('proxy', Flag.PROXY);
  drop('relays', Flag.PRIVACY_RELAY);
  drop('datacenter', Flag.DATACENTER | Flag.DATACENTER_ASN | Flag.CONTENT | Flag.NETWORK_SERVICE_PROVIDER | Flag.WEBHOOK | Flag.MESSAGING);
  drop('network_type', Flag.MOBILE);
  drop('threat', Flag.DROP | Flag.THREAT_LIST | Flag.THREAT_FEED | Flag.ASN_DROP);
  drop('bogons', Flag.BOGON);
  drop('crawlers', Flag.CRAWLER_RANGE);
  const route = removed.has('routing') ? null : r.route && removed.has('rpki') ? { ...r.route, rpkiStatus: 'unknown' as const } : r.route;
  return {
    ...r,
    flags,
    route,
    geo: removed.has('geolocation') ? null : r.geo,
    asn: removed.has('asn') ? null : r.asn,
    crawler: removed.has('crawlers') ? null : r.crawler,
    threatList: removed.has('threat') ? null : r.threatList,
    threatFeed: removed.has('threat') ? null : r.threatFeed,
  };
}

/** Kinds to remove; RPKI states are states of routes, so no routing means no RPKI either. */
const kindsArb = fc.subarray([...EVIDENCE_KINDS], { minLength: 1 }).map((ks) => (ks.includes('routing') && !ks.includes('rpki') ? [...ks, 'rpki' as const] : ks));
const kindOf = (label: string) => SIGNALS[label as keyof typeof SIGNALS].kind;

describe('a thin index: no evidence from absent layers', () => {
  test('every signal on the thin index is also raised on the full one, and none is of a missing kind', () => {
    fc.assert(
      fc.property(recordArb, ctxArb, kindsArb, (record, ctx, missing) => {
        const removed = new Set(missing);
        const thin = holding(EVIDENCE_KINDS.filter((k) => !removed.has(k)));
        const thinRecord = strip(record, removed);
        const thinLabels = collectEvidence(thinRecord, classify(thinRecord, { ...ctx, coverage: thin }), thin).signals.map((s) => s.label);
        const fullLabels = collectEvidence(record, classify(record, ctx)).signals.map((s) => s.label);
        for (const label of thinLabels) {
          const kind = kindOf(label);
          expect(kind === null || !removed.has(kind)).toBe(true);
          // Once no bogon list claims the address, it is ordinary space: its built-in special-use
          // block, or (with routing data) the absence of a route, is then evidence of its own.
          if ((label === 'special_use_address' || label === 'unrouted_address') && removed.has('bogons')) continue;
          expect(fullLabels).toContain(label);
        }
      }),
      { numRuns: 1500 },
    );
  });

  test('an address without evidence in the missing layers gets the same risk as on a full index', () => {
    fc.assert(
      fc.property(recordArb, ctxArb, kindsArb, (record, ctx, missing) => {
        const removed = new Set(missing);
        const fullSignals = collectEvidence(record, classify(record, ctx)).signals;
        // "No evidence about it": the full index raised nothing from the layers the thin one lacks.
        fc.pre(fullSignals.every((s) => !removed.has(kindOf(s.label) as EvidenceKind)));
        const thin = holding(EVIDENCE_KINDS.filter((k) => !removed.has(k)));
        const thinRecord = strip(record, removed);
        const thinCtx = { ...ctx, coverage: thin };
        const a = assessRecord(thinRecord, thinCtx, DEFAULT_POLICY);
        const b = assessRecord(record, ctx, DEFAULT_POLICY);
        expect(a.score.risk_score).toBe(b.score.risk_score);
      }),
      { numRuns: 1500 },
    );
  });

  test('an ordinary ISP address on an index without routing: no unrouted_address, base risk, no routing risk', () => {
    const noRouting = holding(EVIDENCE_KINDS.filter((k) => k !== 'routing'));
    const isp = baseRecord({ route: null });
    const a = assessRecord(isp, { verifiedCrawler: null, coverage: noRouting }, DEFAULT_POLICY);
    expect(a.evidence.signals.map((s) => s.label)).not.toContain('unrouted_address');
    expect(a.score.risk_score).toBe(10);
    expect(a.scores.routing_risk_score).toBe(0);
    // With routing data loaded, the same absence of a route is evidence.
    const b = assessRecord(isp, { verifiedCrawler: null, coverage: FULL_COVERAGE }, DEFAULT_POLICY);
    expect(b.evidence.signals.map((s) => s.label)).toContain('unrouted_address');
  });

  test('routes for IPv4 only: a missing route is no evidence, the routes present still are', () => {
    const m = meta(EVIDENCE_KINDS.map((k) => ({ type: 't', kinds: [k], date: new Date(NOW).toISOString() })));
    m.routedFamilies = [4];
    const v4Only = coverageOf(m, NOW);
    expect(v4Only.kinds.routing.state).toBe('ready');
    const unrouted = assessRecord(baseRecord({ route: null }), { verifiedCrawler: null, coverage: v4Only }, DEFAULT_POLICY);
    expect(unrouted.evidence.signals.map((s) => s.label)).not.toContain('unrouted_address');
    expect(unrouted.scores.routing_risk_score).toBe(0);
    const moas = baseRecord({ route: { prefix: '73.128.0.0/10', originAsn: null, origins: [7922, 7018], rpkiStatus: 'invalid', originConflict: true } });
    const labels = collectEvidence(moas, classify(moas, { verifiedCrawler: null, coverage: v4Only }), v4Only).signals.map((s) => s.label);
    expect(labels).toEqual(['rpki_invalid', 'origin_conflict']);
    m.routedFamilies = [4, 6];
    expect(coverageOf(m, NOW).routesComplete).toBe(true);
  });

  test('a stale routing snapshot says nothing about space allocated after it: no unrouted_address there', () => {
    // Routes from two snapshots (the older one bounds what they can say), every other kind fresh.
    const fresh = new Date(NOW - 3_600_000).toISOString();
    const sources: Array<{ type: string; kinds: string[]; date: string }> = EVIDENCE_KINDS.filter((k) => k !== 'routing').map((k) => ({ type: 't', kinds: [k], date: fresh }));
    sources.push({ type: 'pfx2as', kinds: ['routing'], date: '2024-04-06T12:00:00.000Z' }, { type: 'ris-whois', kinds: ['routing'], date: '2022-05-27T00:00:00.000Z' });
    const coverage = coverageOf(meta(sources), NOW);
    expect(coverage.kinds.routing.state).toBe('stale');
    expect(coverage.routesAsOf).toBe('2022-05-27');
    const allocated = (date: string | null) =>
      baseRecord({ route: null, allocation: { cidr: '45.80.0.0/14', range: '45.80.0.0 - 45.83.255.255', registry: 'ripencc', countryCode: 'DE', status: 'allocated', date } });
    const labels = (r: IndexRecord) => assessRecord(r, { verifiedCrawler: null, coverage }, DEFAULT_POLICY).evidence.signals.map((s) => s.label);
    expect(labels(allocated('2025-02-01'))).not.toContain('unrouted_address');
    expect(labels(allocated('2022-05-28'))).not.toContain('unrouted_address');
    expect(assessRecord(allocated('2025-02-01'), { verifiedCrawler: null, coverage }, DEFAULT_POLICY).scores.routing_risk_score).toBe(0);
    // Space allocated before every snapshot, or of unknown date, is still unrouted in them (stale: half weight).
    expect(labels(allocated('2019-06-01'))).toContain('unrouted_address');
    expect(labels(allocated(null))).toContain('unrouted_address');
  });

  test('without threat data threat_level is Unknown, not Low; facts the index holds still raise it', () => {
    const noThreat = holding(EVIDENCE_KINDS.filter((k) => k !== 'threat'));
    expect(classify(baseRecord(), { verifiedCrawler: null, coverage: noThreat }).threat_level).toBe('Unknown');
    expect(classify(baseRecord(), { verifiedCrawler: null, coverage: FULL_COVERAGE }).threat_level).toBe('Low');
    const tor = baseRecord({ flags: Flag.TOR_EXIT });
    expect(classify(tor, { verifiedCrawler: null, coverage: noThreat }).threat_level).toBe('Medium');
  });

  test('usage by elimination is low confidence when an eliminated kind is not loaded; the summary says what is missing', () => {
    const thin = holding(['geolocation', 'asn', 'routing']);
    const a = assessRecord(baseRecord(), { verifiedCrawler: null, coverage: thin }, DEFAULT_POLICY);
    expect(a.classification.confidence).toBe('low');
    expect(a.classification.is_tor).toBe(false);
    expect(a.evidence.unavailable).toEqual(['rpki', 'bogons', 'tor', 'vpn', 'proxy', 'relays', 'crawlers', 'datacenter', 'threat', 'network_type']);
    expect(a.evidence.stale).toBeUndefined();
    expect(a.explanation.summary).toContain('No Tor, VPN, proxy, privacy relay, threat, cloud/hosting, crawler or bogon data loaded.');
    const full = assessRecord(baseRecord(), { verifiedCrawler: null, coverage: FULL_COVERAGE }, DEFAULT_POLICY);
    expect(full.explanation.summary).not.toContain('data loaded');
    expect(Object.keys(full.evidence)).toEqual(['signals']);
  });
});

describe('stale kinds', () => {
  test("a stale kind's signals weigh half and are one level less confident", () => {
    const staleTor = holding(EVIDENCE_KINDS, ['tor']);
    const tor = baseRecord({ flags: Flag.TOR_EXIT });
    const c = classify(tor, { verifiedCrawler: null, coverage: staleTor });
    const ev = collectEvidence(tor, c, staleTor);
    const signal = ev.signals.find((s) => s.label === 'tor_exit')!;
    expect(signal.confidence).toBe('medium');
    expect(SIGNALS.tor_exit.confidence).toBe('high');
    const trace = traceScore(ev, staleTor);
    expect(trace.contributions.find((x) => x.label === 'tor_exit')!.weight).toBe(Math.trunc(SIGNALS.tor_exit.weight / 2));
    expect(trace.score.risk_score).toBeLessThan(traceScore(collectEvidence(tor, classify(tor, { verifiedCrawler: null }))).score.risk_score);
    // The usage read from that kind is less certain too, and the explanation says why the weight is lower.
    expect(c.confidence).toBe('medium');
    const a = assessRecord(tor, { verifiedCrawler: null, coverage: staleTor }, DEFAULT_POLICY);
    expect(a.explanation.drivers.find((d) => d.label === 'tor_exit')!.reason).toContain('stale data');
    expect(a.explanation.summary).toContain('Tor data stale.');
    expect(a.evidence.stale).toEqual(['tor']);
    expect(a.evidence.unavailable).toBeUndefined();
  });

  test('coverageOf: a kind is stale past its threshold, by its newest source', () => {
    const c = coverageOf(
      meta([
        { type: 'tor-exits', kinds: ['tor'], date: new Date(NOW - 2 * DAY).toISOString() },
        { type: 'spamhaus-drop', kinds: ['threat'], date: new Date(NOW - 30 * DAY).toISOString() },
        { type: 'threat-feed', kinds: ['threat'], date: new Date(NOW - 2 * DAY).toISOString() },
      ]),
      NOW,
    );
    expect(c.kinds.tor).toEqual({ state: 'stale', sources: 1, newest: new Date(NOW - 2 * DAY).toISOString(), ageSeconds: 2 * 86400, staleAfterSeconds: 86400 });
    expect(c.kinds.threat.state).toBe('ready');
    expect(c.kinds.threat.sources).toBe(2);
    expect(c.kinds.vpn.state).toBe('unavailable');
    expect(c.kinds.allocation.state).toBe('ready');
    expect(coverageNote(c)).toContain('Tor data stale');
  });

  test("a stated date outranks a copy's mtime: the kind is dated by its sources that state one", () => {
    const m = meta([
      { type: 'tor-exits', kinds: ['tor'], date: '2024-03-12T14:00:00.000Z' },
      { type: 'tor-exits', kinds: ['tor'], date: new Date(NOW - 3_600_000).toISOString() },
      { type: 'cidr-list', kinds: ['vpn'], date: new Date(NOW - 3_600_000).toISOString() },
    ]);
    m.sources[1].dateFrom = 'mtime';
    m.sources[2].dateFrom = 'mtime';
    const c = coverageOf(m, NOW);
    expect(c.kinds.tor).toMatchObject({ state: 'stale', sources: 2, newest: '2024-03-12T14:00:00.000Z' });
    // With no stated date at all, the mtime is all there is.
    expect(c.kinds.vpn).toMatchObject({ state: 'ready', ageSeconds: 3600 });
  });

  test('an index file from before sources carried kinds: its capabilities, dated by the build', () => {
    const m = meta([]);
    m.sources = [{ type: 'tor-exits', path: 'x', rows: 1, skipped: 0, bytes: 1, sha256: '', seconds: 0 }];
    m.capabilities = { tor: true, routing: false, allocation: true };
    m.builtAt = new Date(NOW - 2 * DAY).toISOString();
    const c = coverageOf(m, NOW);
    expect(c.kinds.tor).toMatchObject({ state: 'stale', sources: 1, ageSeconds: 2 * 86400 });
    expect(c.kinds.routing.state).toBe('unavailable');
  });
});
