/**
 * The dual-stack assessment (GET /v1/assessment): each address on its own,
 * then the pair: do both stacks belong to the same network and country, is
 * either an anonymising or hosting network, and one combined verdict.
 * Its own response shape (spec 4.2); documented in the OpenAPI.
 */
import type { Static } from '@sinclair/typebox';
import type { LookupHit } from '../index/record.ts';
import { assess } from '../scoring/index.ts';
import type { AssessContext } from '../scoring/index.ts';
import type { PairAssessment, StackAssessmentBody } from '../contract/lookups.ts';
import { orgOf } from './v1.ts';

/** One address's part of the assessment (declared in src/contract/lookups.ts). */
export type StackAssessment = StackAssessmentBody;

/** One address's part of the assessment. */
export function assessStack(hit: LookupHit, ctx: AssessContext): StackAssessment {
  const a = assess(hit.record, ctx);
  const c = a.classification;
  const score = a.score;
  const { unavailable, stale } = a.evidence;
  return {
    ip: hit.ip,
    country_code: hit.record.geo?.countryCode ?? null,
    asn: hit.record.asn ? `AS${hit.record.asn.asn}` : null,
    org: orgOf(hit.record),
    usage_type: c.usage_type,
    is_datacenter: c.is_datacenter,
    is_vpn: c.is_vpn,
    is_proxy: c.is_proxy,
    is_tor: c.is_tor,
    is_privacy_relay: c.is_privacy_relay,
    score,
    ...(unavailable ? { unavailable: [...unavailable] } : {}),
    ...(stale ? { stale: [...stale] } : {}),
  };
}

const VERDICT_ORDER = ['allow', 'monitor', 'challenge', 'block'] as const;

/** The pair's comparison and combined verdict (null fields when a stack is missing). */
export function assessPair(v4: StackAssessment | null, v6: StackAssessment | null): Static<typeof PairAssessment> {
  const both = v4 !== null && v6 !== null;
  const stacks = [v4, v6].filter((x): x is StackAssessment => x !== null);
  const same = (f: (s: StackAssessment) => string | null) => (both && f(v4!) !== null && f(v6!) !== null ? f(v4!) === f(v6!) : null);
  const worst = stacks.reduce<StackAssessment | null>((w, s) => (w === null || s.score.risk_score > w.score.risk_score ? s : w), null);
  const reasons: string[] = [];
  const sameAsn = same((s) => s.asn);
  const sameCountry = same((s) => s.country_code);
  if (sameAsn === false) reasons.push('the IPv4 and IPv6 addresses are announced by different networks');
  if (sameCountry === false) reasons.push('the IPv4 and IPv6 addresses geolocate to different countries');
  for (const s of stacks) {
    if (s.is_tor) reasons.push(`${s.ip} is a Tor exit`);
    else if (s.is_vpn) reasons.push(`${s.ip} is in a VPN range`);
    else if (s.is_privacy_relay) reasons.push(`${s.ip} is privacy relay egress`);
    else if (s.is_datacenter) reasons.push(`${s.ip} is in a hosting/datacenter range`);
  }
  // A stack mismatch alone is common (tunnels, dual-homed offices); it nudges monitoring, never blocks.
  let verdict = worst?.score.verdict ?? 'allow';
  if ((sameAsn === false || sameCountry === false) && verdict === 'allow') verdict = 'monitor';
  return {
    same_asn: sameAsn,
    same_org: same((s) => s.org),
    same_country: sameCountry,
    any_datacenter: stacks.some((s) => s.is_datacenter),
    any_vpn: stacks.some((s) => s.is_vpn),
    any_proxy: stacks.some((s) => s.is_proxy),
    any_tor: stacks.some((s) => s.is_tor),
    any_privacy_relay: stacks.some((s) => s.is_privacy_relay),
    consistent: both ? sameAsn !== false && sameCountry !== false : null,
    combined: {
      risk_score: worst?.score.risk_score ?? 0,
      verdict: VERDICT_ORDER.includes(verdict as (typeof VERDICT_ORDER)[number]) ? verdict : 'monitor',
      reasons,
    },
  };
}
