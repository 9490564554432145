/**
 * The scored part is shared by records with the same scoring key, so the key
 * must hold every fact scoring reads. Property: for a record A and a record B
 * that differs from A in everything the key leaves out (names, numbers,
 * prefixes, geo, allocation, crawler and provider labels), the body composed
 * for B after A filled the memo equals serializing B's own v1 object.
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import type { IndexRecord, LookupHit } from '../../src/index/record.ts';
import { scoringKey } from '../../src/scoring/view.ts';
import { buildV1, type V1Context } from '../../src/lookup/v1.ts';
import { DEFAULT_POLICY, FULL_COVERAGE } from '../../src/scoring/index.ts';
import { baseRecord } from '../scoring/fixtures.ts';
import { recordArb } from '../scoring/arbitraries.ts';
import { answerOf, memoOf } from '../helpers/v1-memo.ts';

const ctx: V1Context = { scoring: { verifiedCrawler: null }, policy: DEFAULT_POLICY, rdapOwner: null, now: Date.parse('2026-11-22T00:00:00Z') };
const hitOf = (record: IndexRecord, ip = '192.0.2.1'): LookupHit => ({ family: 4, ip, rangeStart: ip, rangeEnd: ip, recordId: 1, record });
const direct = (hit: LookupHit) => JSON.stringify(buildV1(hit, ctx, null));

/**
 * Records as the index has most of them (no special-use block, provider or
 * threat-feed entry: scoringKey's packed form) half of the time, any record otherwise.
 */
const anyRecordArb: fc.Arbitrary<IndexRecord> = fc.tuple(recordArb, fc.boolean()).map(([r, plain]) => (plain ? { ...r, specialUse: null, provider: null, threatFeed: null } : r));

/** Names as feeds may carry them: empty, quotes, backslashes, non-ASCII, control characters. */
const nameArb = fc.option(fc.oneof(fc.string(), fc.constantFrom('', 'Cloudflare, Inc.', 'A "quoted" \\ name', 'Société Générale', 'tab\there', '\u2028line')), { nil: null });

/** B: A with every fact outside the scoring key replaced (same key by construction, checked). */
const variantArb = (a: IndexRecord): fc.Arbitrary<IndexRecord> =>
  fc.record({ other: recordArb, asnName: nameArb, providerName: nameArb, asnNumber: fc.integer({ min: 1, max: 4294967295 }), crawler: fc.constantFrom('googlebot', 'bingbot', 'x') }).map(({ other, asnName, providerName, asnNumber, crawler }) => {
    const sameState = (orig: string | null, next: string | null) => (orig === null ? null : orig === '' ? '' : next || 'n');
    return {
      ...a,
      geo: a.geo ? (other.geo ?? { ...a.geo, city: 'Elsewhere' }) : null,
      asn: a.asn ? { asn: asnNumber, name: sameState(a.asn.name, asnName) } : null,
      allocation: a.allocation ? (other.allocation ?? { ...a.allocation, registry: 'apnic' }) : null,
      route: a.route ? { ...a.route, prefix: '198.51.100.0/24', originAsn: a.route.originAsn === null ? null : asnNumber, origins: other.route?.origins ?? [asnNumber] } : null,
      provider: a.provider ? { ...a.provider, name: sameState(a.provider.name, providerName), service: other.provider?.service ?? null, region: other.provider?.region ?? null } : null,
      crawler: a.crawler === null ? null : crawler,
      specialUse: a.specialUse ? { ...a.specialUse, name: 'Other block', cidr: '100.64.0.0/10', rfc: 'RFC6598' } : null,
      threatList: a.threatList ? { list: 'other-list', reference: other.threatList?.reference ?? 'X' } : null,
    };
  });

test('records differing only outside the scoring key get exactly their own scored part', () => {
  const pairs = anyRecordArb.chain((a) => variantArb(a).map((b) => [a, b] as const));
  fc.assert(
    fc.property(pairs, ([a, b]) => {
      expect(scoringKey(b)).toBe(scoringKey(a));
      const cache = memoOf(null, ctx);
      expect(cache.body(hitOf(a), answerOf(ctx))).toBe(direct(hitOf(a)));
      expect(cache.body(hitOf(b, '203.0.113.9'), answerOf(ctx))).toBe(direct(hitOf(b, '203.0.113.9')));
      expect(cache.views).toBe(1);
    }),
    { numRuns: 3000 },
  );
}, 60_000); // thousands of property runs: 1–6 s here, past Bun's 5 s default under load

/** One change to one fact scoring reads (each must lead to the record's own answer, not a cached one). */
const MUTATIONS: Array<(r: IndexRecord, bit: number) => IndexRecord> = [
  (r, bit) => ({ ...r, flags: r.flags ^ (1 << bit) }),
  (r) => ({ ...r, geo: r.geo ? null : { countryCode: 'US', region: null, city: null, postalCode: null, latitude: 1, longitude: 2, timezone: null } }),
  (r) => ({ ...r, asn: r.asn ? null : { asn: 64500, name: 'Org' } }),
  (r) => ({ ...r, asn: r.asn ? { ...r.asn, name: r.asn.name === null ? 'Org' : null } : r.asn }),
  (r) => ({ ...r, asn: r.asn ? { ...r.asn, name: r.asn.name === '' ? 'Org' : '' } : r.asn }),
  (r) => ({ ...r, allocation: r.allocation ? null : { cidr: null, range: 'a - b', registry: 'arin', countryCode: null, status: 'allocated', date: null } }),
  (r) => ({ ...r, route: r.route ? null : { prefix: '192.0.2.0/24', originAsn: 1, origins: [1], rpkiStatus: 'valid', originConflict: false } }),
  (r) => ({ ...r, route: r.route ? { ...r.route, rpkiStatus: r.route.rpkiStatus === 'invalid' ? 'valid' : 'invalid' } : r.route }),
  (r) => ({ ...r, route: r.route ? { ...r.route, rpkiStatus: r.route.rpkiStatus === 'unknown' ? 'not_found' : 'unknown' } : r.route }),
  (r) => ({ ...r, route: r.route ? { ...r.route, originConflict: !r.route.originConflict } : r.route }),
  (r) => ({ ...r, route: r.route ? { ...r.route, originAsn: r.route.originAsn === null ? 7 : null } : r.route }),
  (r) => ({ ...r, provider: r.provider ? null : { name: 'P', category: 'datacenter', service: null, region: null } }),
  (r) => ({ ...r, provider: r.provider ? { ...r.provider, name: r.provider.name === null ? 'P' : null } : r.provider }),
  (r) => ({ ...r, provider: r.provider ? { ...r.provider, category: r.provider.category === 'vpn' ? 'content' : 'vpn' } : r.provider }),
  (r) => ({ ...r, crawler: r.crawler === null ? 'googlebot' : null }),
  (r) => ({ ...r, specialUse: r.specialUse ? null : { name: 'Private-Use', cidr: '10.0.0.0/8', rfc: 'RFC1918', kind: 'private', globallyReachable: false } }),
  (r) => ({ ...r, specialUse: r.specialUse ? { ...r.specialUse, globallyReachable: !r.specialUse.globallyReachable } : r.specialUse }),
  (r) => ({ ...r, specialUse: r.specialUse ? { ...r.specialUse, kind: r.specialUse.kind === 'shared' ? 'private' : 'shared' } : r.specialUse }),
  (r) => ({ ...r, threatList: r.threatList ? null : { list: 'l', reference: null } }),
  (r) => ({ ...r, threatFeed: r.threatFeed ? null : { malware: 'QakBot', firstSeen: '2024-01-01', lastSeen: null, port: null, status: null } }),
  (r) => ({ ...r, threatFeed: r.threatFeed ? { ...r.threatFeed, malware: r.threatFeed.malware === 'X' ? 'Y' : 'X' } : r.threatFeed }),
  (r) => ({ ...r, threatFeed: r.threatFeed ? { ...r.threatFeed, lastSeen: '2025-05-05' } : r.threatFeed }),
  (r) => ({ ...r, networkType: r.networkType === null ? 'cable_dsl_isp' : null }),
  (r) => ({ ...r, networkType: r.networkType === 'content' ? 'nsp' : 'content' }),
];

test('a change to any fact scoring reads gives that record its own answer, never the cached one', () => {
  const cache = memoOf(null, ctx);
  fc.assert(
    fc.property(anyRecordArb, fc.nat(MUTATIONS.length - 1), fc.nat(18), (r, m, bit) => {
      expect(cache.body(hitOf(r), answerOf(ctx))).toBe(direct(hitOf(r)));
      const changed = MUTATIONS[m](r, bit);
      expect(cache.body(hitOf(changed), answerOf(ctx))).toBe(direct(hitOf(changed)));
    }),
    { numRuns: 4000 },
  );
}, 60_000);

test('the operator name is spliced into the explanation summary, escaped as JSON', () => {
  const cache = memoOf(null, ctx);
  const base: IndexRecord = {
    flags: 1, geo: null, asn: { asn: 64500, name: 'First "Org"' }, allocation: null, route: null,
    provider: null, crawler: null, specialUse: null, threatList: null, threatFeed: null, networkType: null,
  };
  const first = JSON.parse(cache.body(hitOf(base), answerOf(ctx)));
  expect(first.explanation.summary).toContain('(First "Org")');
  const second = JSON.parse(cache.body(hitOf({ ...base, asn: { asn: 64501, name: 'Second\\Org\u2028' } }), answerOf(ctx)));
  expect(second.explanation.summary).toContain('(Second\\Org\u2028)');
  expect(cache.views).toBe(1);
});

test('the scored part is ASCII unless a feed name brings other characters (non-Latin-1 text makes every body a UTF-16 string that each response must transcode)', () => {
  const cache = memoOf(null, ctx);
  const asciiNames = (r: IndexRecord): IndexRecord => ({
    ...r,
    asn: r.asn ? { ...r.asn, name: r.asn.name === null ? null : 'Example Networks' } : null,
    provider: r.provider ? { ...r.provider, name: r.provider.name === null ? null : 'Example Cloud', service: 'svc' } : null,
    crawler: r.crawler === null ? null : 'googlebot',
  });
  fc.assert(
    fc.property(anyRecordArb, (r) => {
      const body = cache.body(hitOf(asciiNames(r)), answerOf(ctx));
      const scored = body.slice(body.indexOf('"score":'));
      expect(/^[\x20-\x7e]*$/.test(scored)).toBe(true);
    }),
    { numRuns: 1000 },
  );
});

test('an allocation dated after the routing snapshots is a fact scoring reads: the memo keeps it apart', () => {
  const coverage = Object.freeze({ ...FULL_COVERAGE, routesAsOf: '2022-05-27' });
  const withCoverage: V1Context = { ...ctx, scoring: { verifiedCrawler: null, coverage } };
  const allocated = (date: string): IndexRecord => ({
    ...baseRecord({ route: null }),
    allocation: { cidr: '45.80.0.0/14', range: '45.80.0.0 - 45.83.255.255', registry: 'ripencc', countryCode: 'DE', status: 'allocated', date },
  });
  const older = allocated('2019-06-01');
  const newer = allocated('2025-02-01');
  expect(scoringKey(newer, coverage)).not.toBe(scoringKey(older, coverage));
  const cache = memoOf(null, withCoverage);
  const own = (r: IndexRecord) => JSON.stringify(buildV1(hitOf(r), withCoverage, null));
  expect(cache.body(hitOf(older), answerOf(withCoverage))).toBe(own(older));
  expect(cache.body(hitOf(newer), answerOf(withCoverage))).toBe(own(newer));
  expect(JSON.parse(own(older)).evidence.signals.map((s: { label: string }) => s.label)).toContain('unrouted_address');
  expect(JSON.parse(own(newer)).evidence.signals.map((s: { label: string }) => s.label)).not.toContain('unrouted_address');
});
