/**
 * The eight advisory sub-scores of spec 2.2 `scores`. risk_score and
 * base_risk_score are copied from the score trace; the others are 0..100
 * readings of one aspect each, taken as the strongest matching fact.
 */
import { Flag, type IndexRecord } from '../../index/record.ts';
import { FULL_COVERAGE, missingRouteIsEvidence, type Coverage } from '../coverage.ts';
import type { Policy } from '../policy/schema.ts';
import type { Classification, Profile, ScoreTrace, SubScores } from '../types.ts';

/** Strongest value among the facts that hold (0 when none). */
function strongest(flags: number, table: ReadonlyArray<readonly [number, number]>): number {
  let best = 0;
  for (const [mask, value] of table) if (flags & mask && value > best) best = value;
  return best;
}

/** Threat-list facts; ASN-DROP is context for the network, so it only nudges. */
export const ABUSE_VALUES: ReadonlyArray<readonly [number, number]> = [
  [Flag.DROP, 90],
  [Flag.THREAT_LIST, 75],
  [Flag.THREAT_FEED, 75],
  [Flag.ASN_DROP, 25],
];

/** Anonymity facts: Tor strongest, shared relay egress weakest. */
export const ANONYMITY_VALUES: ReadonlyArray<readonly [number, number]> = [
  [Flag.TOR_EXIT, 95],
  [Flag.PROXY, 80],
  [Flag.VPN, 75],
  [Flag.VPN_ASN, 45],
  [Flag.PRIVACY_RELAY, 40],
];

/** Infrastructure facts: a hosting range list beats an ASN-level match. */
export const INFRASTRUCTURE_VALUES: ReadonlyArray<readonly [number, number]> = [
  [Flag.DATACENTER, 70],
  [Flag.DATACENTER_ASN, 45],
  [Flag.CONTENT, 40],
  [Flag.NETWORK_SERVICE_PROVIDER, 40],
  [Flag.WEBHOOK, 30],
  [Flag.MESSAGING, 30],
];

/** Routing problems add up (capped at 100); non-routable space is the maximum; no route is a risk only where routing data covers every family. */
function routingRisk(record: IndexRecord, c: Classification, coverage: Coverage): number {
  if (c.traits.includes('non_routable')) return 100;
  const route = record.route;
  if (!route) return missingRouteIsEvidence(record, coverage) ? 20 : 0;
  let v = 0;
  if (route.rpkiStatus === 'invalid') v += 60;
  if (route.originConflict) v += 25;
  if (route.originAsn === null) v += 10;
  return Math.min(100, v);
}

/** How much the index knows about the address (0..100): completeness of its layers. */
export function evidenceQuality(record: IndexRecord, c: Classification): number {
  let q = 0;
  if (record.geo) q += 10;
  if (record.asn) q += 15;
  if (record.route) q += 20;
  if (record.allocation) q += 15;
  if (record.route && record.route.rpkiStatus !== 'unknown') q += 10;
  // A named list membership (provider, crawler, threat, relay, Tor, special-use) is direct evidence.
  if (record.provider || record.crawler !== null || record.threatList || record.specialUse) q += 20;
  else if (record.flags & (Flag.TOR_EXIT | Flag.PRIVACY_RELAY | Flag.VPN | Flag.DATACENTER | Flag.DROP | Flag.BOGON | Flag.THREAT_FEED)) q += 20;
  if (c.is_verified_crawler) q += 10;
  // For reserved space the address registries are the whole answer: no route or geo is expected.
  if (c.traits.includes('non_routable') && (record.specialUse || record.flags & Flag.BOGON)) q = Math.max(q, 80);
  return Math.min(100, q);
}

/** Spec 2.2 scores for a record under a policy. */
export function computeSubScores(
  record: IndexRecord,
  classification: Classification,
  trace: ScoreTrace,
  profile: Profile,
  policy: Policy,
  coverage: Coverage = FULL_COVERAGE,
): SubScores {
  return {
    risk_score: trace.score.risk_score,
    base_risk_score: trace.base_risk_score,
    abuse_score: strongest(record.flags, ABUSE_VALUES),
    anonymity_score: strongest(record.flags, ANONYMITY_VALUES),
    trust_score: policy.profiles[profile].trust,
    infrastructure_score: strongest(record.flags, INFRASTRUCTURE_VALUES),
    routing_risk_score: routingRisk(record, classification, coverage),
    evidence_quality_score: evidenceQuality(record, classification),
  };
}
