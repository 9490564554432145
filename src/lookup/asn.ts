/**
 * The ASN object (spec 2.5, 4.4): local name, threat density computed at
 * build time, ASN-DROP context, and the optional radar enrichment; and the
 * `AS<n>` parameter it is asked by.
 */
import { ApiError } from '../api-error.ts';
import type { AsnDetails } from '../index/record.ts';
import type { Coverage } from '../index/coverage.ts';

/** A density counts as significant from this fraction of announced IPv4 space listed... */
export const SIGNIFICANT_RATIO = 0.01;
/** ...and at least this many listed addresses (one /24), so tiny ASNs are not flagged by one host. */
export const SIGNIFICANT_MIN_ADDRESSES = 256;
const DENSITY_SOURCE = 'threat lists (hijacked/criminal netblocks, botnet C2) over the IPv4 prefixes the ASN announces';
const NO_THREAT_SOURCE = 'no threat lists are loaded in this index: the threat density is unknown (counted over the IPv4 prefixes the ASN announces when they are)';

/** Parses `AS<n>` (case-insensitive prefix, no leading zeros, 1..4294967295); null when malformed. */
export function parseAsn(text: string): number | null {
  const m = /^[Aa][Ss]([1-9]\d{0,9})$/.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  return n >= 1 && n <= 4294967295 ? n : null;
}

/** The spec's INVALID_ASN error for a text. */
export function invalidAsn(text: string): ApiError {
  return new ApiError('INVALID_ASN', `Not a valid ASN (expected AS<number>): ${text.slice(0, 100)}`, { provided: text });
}

/**
 * Spec 2.5 threat_density under the index's coverage: without threat lists
 * the counts, ratio and significance are null (absence is not evidence);
 * with stale lists they stand and `threat_data` and `source` say so.
 */
function threatDensity(d: AsnDetails | null, coverage: Coverage) {
  const threat = d?.threatDensity ?? { threatNetworkCount: 0, threatIpv4Addresses: 0, totalIpv4Addresses: 0 };
  const state = coverage.kinds.threat.state;
  if (state === 'unavailable') {
    return {
      threat_network_count: null,
      threat_ipv4_addresses: null,
      total_ipv4_addresses: threat.totalIpv4Addresses,
      ratio: null,
      percent: null,
      significant: null,
      threat_data: state,
      source: NO_THREAT_SOURCE,
    };
  }
  const ratio = threat.totalIpv4Addresses > 0 ? threat.threatIpv4Addresses / threat.totalIpv4Addresses : 0;
  const newest = coverage.kinds.threat.newest;
  return {
    threat_network_count: threat.threatNetworkCount,
    threat_ipv4_addresses: threat.threatIpv4Addresses,
    total_ipv4_addresses: threat.totalIpv4Addresses,
    ratio: Math.round(ratio * 1e6) / 1e6,
    percent: Math.round(ratio * 1e4) / 100,
    significant: ratio >= SIGNIFICANT_RATIO && threat.threatIpv4Addresses >= SIGNIFICANT_MIN_ADDRESSES,
    threat_data: state,
    source: state === 'stale' ? `${DENSITY_SOURCE}; the threat lists are stale (newest from ${newest?.slice(0, 10) ?? 'an unknown date'})` : DENSITY_SOURCE,
  };
}

/** The ASN object of spec 2.5 from the index's details of an ASN (null: none held), the radar enrichment and the index's coverage. */
export function asnObject(asn: number, d: AsnDetails | null, radar: unknown | null, coverage: Coverage) {
  return {
    asn: `AS${asn}`,
    name: d?.name ?? null,
    radar,
    threat_density: threatDensity(d, coverage),
    asndrop: d?.asnDrop
      ? { asn: d.asnDrop.asn, as_name: d.asnDrop.asName, rir: d.asnDrop.rir, domain: d.asnDrop.domain, country_code: d.asnDrop.countryCode }
      : null,
  };
}
