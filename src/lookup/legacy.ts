/**
 * The legacy shape of GET / and GET /{ip} (spec 4.6): a flat, curl-friendly
 * JSON object, and its plain-text renderings. Missing values are `-` in text.
 */
import type { LookupHit } from '../index/record.ts';
import { assess } from '../scoring/index.ts';
import type { AssessContext } from '../scoring/index.ts';
import { countryName } from './country.ts';
import { operatorDomain } from './operator-domain.ts';
import type { LegacyObjectBody } from '../contract/lookups.ts';
import { utcOffset } from './timezone.ts';

/** The legacy object (declared in src/contract/lookups.ts). */
export type LegacyObject = LegacyObjectBody;

/** The legacy JSON object of a hit. */
export function legacyObject(hit: LookupHit, ctx: AssessContext, now?: number): LegacyObject {
  const r = hit.record;
  const g = r.geo;
  const asn = r.asn ? `AS${r.asn.asn}` : null;
  const operator = assess(r, ctx).network.operator;
  return {
    ip: hit.ip,
    city: g?.city ?? null,
    region: g?.region ?? null,
    country: g?.countryCode ?? null,
    country_name: countryName(g?.countryCode ?? null),
    postal: g?.postalCode ?? null,
    loc: g && g.latitude !== null && g.longitude !== null ? `${g.latitude},${g.longitude}` : null,
    timezone: g?.timezone ?? null,
    utc_offset: g?.timezone ? utcOffset(g.timezone, now) : null,
    asn,
    org: asn && r.asn?.name ? `${asn} ${r.asn.name}` : (r.asn?.name ?? null),
    operator,
    domain: operatorDomain(operator),
  };
}

const dash = (v: string | null | undefined) => (v === null || v === undefined || v === '' ? '-' : v);

/** The location line: "City, Region, Country (CC)". */
function locationText(o: LegacyObject): string {
  const parts = [o.city, o.region, o.country_name].filter((p): p is string => !!p);
  if (parts.length === 0) return dash(o.country);
  return o.country ? `${parts.join(', ')} (${o.country})` : parts.join(', ');
}

/**
 * Text for a legacy route. Without detail: one line (the IP on the
 * current-IP route; ip, location, ASN and organisation tab-separated on
 * /{ip}). With detail: four labelled lines, plus the operator domain when known.
 */
export function legacyText(o: LegacyObject, detail: boolean, currentRoute: boolean): string {
  if (!detail) {
    if (currentRoute) return `${o.ip}\n`;
    return `${[o.ip, locationText(o), dash(o.asn), dash(o.org ? o.org.replace(/^AS\d+ /, '') : null)].join('\t')}\n`;
  }
  const lines = [
    `IP: ${o.ip}`,
    `Location: ${locationText(o)}`,
    `ASN: ${dash(o.asn)}`,
    `Organization: ${dash(o.org ? o.org.replace(/^AS\d+ /, '') : null)}`,
  ];
  if (o.domain) lines.push(`Domain: ${o.domain}`);
  return `${lines.join('\n')}\n`;
}
