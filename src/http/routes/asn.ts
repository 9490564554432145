/**
 * GET /v1/asn/{asn} and its alias GET /asn/{asn} (spec 2.5, 4.4): local
 * name, threat density computed at build time, ASN-DROP context, and the
 * optional radar enrichment (null when unset or failing).
 */
import { Elysia, t } from 'elysia';
import { ApiError } from '../errors.ts';
import type { AppServices } from '../services.ts';
import { pathParam } from './lookup.ts';

/** A density counts as significant from this fraction of announced IPv4 space listed... */
export const SIGNIFICANT_RATIO = 0.01;
/** ...and at least this many listed addresses (one /24), so tiny ASNs are not flagged by one host. */
export const SIGNIFICANT_MIN_ADDRESSES = 256;
const DENSITY_SOURCE = 'threat lists (hijacked/criminal netblocks, botnet C2) over the IPv4 prefixes the ASN announces';

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

async function asnBody(s: AppServices, raw: string) {
  const asn = parseAsn(raw);
  if (asn === null) throw invalidAsn(raw);
  const d = s.index.current.asnDetails(asn);
  const threat = d?.threatDensity ?? { threatNetworkCount: 0, threatIpv4Addresses: 0, totalIpv4Addresses: 0 };
  const ratio = threat.totalIpv4Addresses > 0 ? threat.threatIpv4Addresses / threat.totalIpv4Addresses : 0;
  return {
    asn: `AS${asn}`,
    name: d?.name ?? null,
    radar: await s.radar.lookup(asn),
    threat_density: {
      threat_network_count: threat.threatNetworkCount,
      threat_ipv4_addresses: threat.threatIpv4Addresses,
      total_ipv4_addresses: threat.totalIpv4Addresses,
      ratio: Math.round(ratio * 1e6) / 1e6,
      percent: Math.round(ratio * 1e4) / 100,
      significant: ratio >= SIGNIFICANT_RATIO && threat.threatIpv4Addresses >= SIGNIFICANT_MIN_ADDRESSES,
      source: DENSITY_SOURCE,
    },
    asndrop: d?.asnDrop
      ? { asn: d.asnDrop.asn, as_name: d.asnDrop.asName, rir: d.asnDrop.rir, domain: d.asnDrop.domain, country_code: d.asnDrop.countryCode }
      : null,
  };
}

/** The ASN routes (identical bodies on both paths). */
export function asnRoutes(s: AppServices) {
  const handler = async ({ params, request, set }: { params: { asn: string }; request: Request; set: { headers: Record<string, string | number> } }) => {
    const body = await asnBody(s, pathParam(params.asn, request));
    set.headers['cache-control'] = 'public, max-age=43200';
    return body;
  };
  const params = t.Object({ asn: t.String({ description: 'AS<number>, e.g. AS15169' }) });
  return new Elysia({ name: 'asn' })
    .get('/v1/asn/:asn', handler, { params })
    .get('/asn/:asn', handler, { params });
}
