/**
 * Assembling the v1 IP lookup object (spec 2.1/2.2) from an index hit.
 * Each top-level field is computed only when asked for: scoring runs only
 * for the fields that need it, and decision objects only when requested.
 */
import type { Static } from '@sinclair/typebox';
import { Flag, type IndexRecord, type LookupHit } from '../index/record.ts';
import { assess, networkContext } from '../scoring/index.ts';
import { missingRouteIsEvidence, type AssessContext, type Classification, type Coverage } from '../scoring/index.ts';
import type { Location, Network, Routability, Routing } from '../contract/v1.ts';
import { countryName } from './country.ts';
import { utcOffset } from './timezone.ts';

/** Top-level fields of the v1 object, in output order (spec 4.1). */
export const V1_FIELDS = [
  'ip',
  'stack',
  'location',
  'network',
  'routing',
  'score',
  'classification',
  'evidence',
  'decision',
  'scores',
  'scenarios',
  'explanation',
] as const;
export type V1Field = (typeof V1_FIELDS)[number];

/** Fields whose values depend on classification (and so on the crawler proof in the scoring context). */
const SCORED_FIELDS: ReadonlySet<string> = new Set(['network', 'score', 'classification', 'evidence', 'decision', 'scores', 'scenarios', 'explanation']);

/**
 * The field set last asked about and its answer: a projection's set is one
 * object per query, kept by the projection memo and never changed, and each
 * request asks twice (answerer.ts, v1-body.ts), so iterating the set is done
 * once per distinct set rather than per request. Module-global yet safe: each
 * thread has its own module.
 */
let lastFields: ReadonlySet<string> | null = null;
let lastNeedsScoring = true;

/** Whether a projection (null: the full object) needs the scoring context at all. */
export function needsScoring(fields: ReadonlySet<string> | null): boolean {
  if (fields === null) return true;
  if (fields === lastFields) return lastNeedsScoring;
  let needs = false;
  for (const f of fields) if (SCORED_FIELDS.has(f)) needs = true;
  lastFields = fields;
  lastNeedsScoring = needs;
  return needs;
}

/** Caller-independent inputs of one lookup besides the index hit: scoring's (crawler proof, coverage, policy) and the answer's own. */
export interface V1Context extends AssessContext {
  /** RDAP owner when an RDAP answer is cached for this address (never fetched here). */
  rdapOwner?: string | null;
  now?: number;
}

/** The organisation of a record: an override's, else the ASN's name. */
export function orgOf(record: IndexRecord): string | null {
  return record.override?.org ?? record.asn?.name ?? null;
}

/** Spec 2.1 location object. */
export function locationOf(record: IndexRecord, now?: number): Static<typeof Location> | null {
  const g = record.geo;
  if (!g) return null;
  return {
    country: countryName(g.countryCode),
    country_code: g.countryCode,
    region: g.region,
    city: g.city,
    postal_code: g.postalCode,
    latitude: g.latitude,
    longitude: g.longitude,
    timezone: g.timezone ? utcOffset(g.timezone, now) : null,
    timezone_name: g.timezone,
  };
}

/** Why an address is or is not globally routable (network.routability); `coverage`: what the index holds. */
export function routabilityOf(record: IndexRecord, coverage?: Coverage): Static<typeof Routability> {
  const s = record.specialUse;
  if (s) {
    return {
      status: s.globallyReachable ? 'global' : s.kind,
      globally_reachable: s.globallyReachable,
      reason: `${s.name} (${s.rfc}), ${s.cidr}`,
    };
  }
  if (record.flags & Flag.BOGON) {
    return { status: 'unallocated', globally_reachable: false, reason: 'Listed as a full bogon: not allocated to any network by the registries' };
  }
  if (!record.route && !record.asn) {
    // Without routing data for both families the absence of a route says nothing.
    if (coverage && !coverage.routesComplete) return { status: 'unknown', globally_reachable: null, reason: 'No routing data for both address families: whether the address is announced is not known' };
    if (coverage && !missingRouteIsEvidence(record, coverage)) {
      return { status: 'unknown', globally_reachable: null, reason: `Allocated after the routing snapshot (${coverage.routesAsOf}): whether the address is announced is not known` };
    }
    return { status: 'unannounced', globally_reachable: null, reason: 'No route for this address was seen in the routing data' };
  }
  return { status: 'global', globally_reachable: true, reason: 'Globally routable unicast address space' };
}

/** Spec 2.1 network object (classification context from scoring). */
export function networkOf(record: IndexRecord, classification: Classification, rdapOwner?: string | null, coverage?: Coverage): Static<typeof Network> {
  const ctx = networkContext(record, classification);
  const a = record.allocation;
  const special = record.specialUse;
  return {
    asn: record.asn ? `AS${record.asn.asn}` : null,
    org: orgOf(record),
    category: ctx.category,
    operator: ctx.operator,
    operator_type: ctx.operator_type,
    service_name: ctx.service_name,
    owner: rdapOwner ?? orgOf(record),
    allocation: a ? { cidr: a.cidr, range: a.range, registry: a.registry, country: a.countryCode, status: a.status, date: a.date } : null,
    routability: routabilityOf(record, coverage),
    is_special_use: special !== null,
    is_bogon: (record.flags & Flag.BOGON) !== 0 || (special !== null && !special.globallyReachable),
  };
}

/** Spec 2.1 routing object; confidence says how directly the origin was observed. */
export function routingOf(record: IndexRecord): Static<typeof Routing> {
  const r = record.route;
  if (r) {
    const confidence = r.originConflict || r.originAsn === null ? 'low' : r.rpkiStatus === 'valid' ? 'high' : 'medium';
    return {
      origin_asn: r.originAsn === null ? null : `AS${r.originAsn}`,
      origins: r.origins.map((o) => `AS${o}`),
      prefix: r.prefix,
      rpki_status: r.rpkiStatus,
      confidence,
      origin_conflict: r.originConflict,
    };
  }
  // Without a routing table the ASN range layer still names the likely origin.
  return {
    origin_asn: record.asn ? `AS${record.asn.asn}` : null,
    origins: record.asn ? [`AS${record.asn.asn}`] : [],
    prefix: null,
    rpki_status: 'unknown',
    confidence: 'low',
    origin_conflict: false,
  };
}

/** Builds the requested fields of the v1 object (all when `fields` is null). */
export function buildV1(hit: LookupHit, ctx: V1Context, fields: ReadonlySet<string> | null): Record<string, unknown> {
  const want = (f: V1Field) => fields === null || fields.has(f);
  const record = hit.record;
  // Scoring runs only as far as the fields read: classification, evidence, score, decisions.
  const a = assess(record, ctx);
  const coverage = ctx.scoring.coverage;

  const out: Record<string, unknown> = {};
  if (want('ip')) out.ip = hit.ip;
  if (want('stack')) out.stack = hit.family === 4 ? 'ipv4' : 'ipv6';
  if (want('location')) out.location = locationOf(record, ctx.now);
  if (want('network')) out.network = networkOf(record, a.classification, ctx.rdapOwner, coverage);
  if (want('routing')) out.routing = routingOf(record);
  if (want('score')) out.score = a.score;
  if (want('classification')) out.classification = a.classification;
  if (want('evidence')) out.evidence = a.evidence;
  if (want('decision')) out.decision = a.decisions.decision;
  if (want('scores')) out.scores = a.decisions.scores;
  if (want('scenarios')) out.scenarios = a.decisions.scenarios;
  if (want('explanation')) out.explanation = a.decisions.explanation;
  return out;
}
