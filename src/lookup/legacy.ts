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
import { isHitOf, RecordMemo } from './record-memo.ts';
import { orgOf } from './v1.ts';
import { LINE_SLOTS } from './memo-sizes.ts';

/** The legacy object (declared in src/contract/lookups.ts). */
export type LegacyObject = LegacyObjectBody;

/** The part of the legacy object read from the record alone (no scoring): all the one-line text shows. */
export type LegacyPlace = Pick<LegacyObject, 'ip' | 'city' | 'region' | 'country' | 'country_name' | 'asn' | 'org'>;

/** The legacy fields of a hit that need no scoring: what `GET /{ip}?format=text` answers, without waiting on a crawler proof. */
export function legacyPlace(hit: LookupHit): LegacyPlace {
  const r = hit.record;
  const g = r.geo;
  const asn = r.asn ? `AS${r.asn.asn}` : null;
  const org = orgOf(r);
  return {
    ip: hit.ip,
    city: g?.city ?? null,
    region: g?.region ?? null,
    country: g?.countryCode ?? null,
    country_name: countryName(g?.countryCode ?? null),
    asn,
    org: asn && org ? `${asn} ${org}` : org,
  };
}

/** The legacy JSON object of a hit. */
export function legacyObject(hit: LookupHit, ctx: AssessContext, now?: number): LegacyObject {
  const r = hit.record;
  const g = r.geo;
  const place = legacyPlace(hit);
  const operator = assess(r, ctx).network.operator;
  // Spelled out: the JSON keeps the spec's key order.
  return {
    ip: place.ip,
    city: place.city,
    region: place.region,
    country: place.country,
    country_name: place.country_name,
    postal: g?.postalCode ?? null,
    loc: g && g.latitude !== null && g.longitude !== null ? `${g.latitude},${g.longitude}` : null,
    timezone: g?.timezone ?? null,
    utc_offset: g?.timezone ? utcOffset(g.timezone, now) : null,
    asn: place.asn,
    org: place.org,
    operator,
    domain: operatorDomain(operator),
  };
}

const dash = (v: string | null | undefined) => (v === null || v === undefined || v === '' ? '-' : v);

/** The location line: "City, Region, Country (CC)". */
function locationText(o: LegacyPlace): string {
  const parts = [o.city, o.region, o.country_name].filter((p): p is string => !!p);
  if (parts.length === 0) return dash(o.country);
  return o.country ? `${parts.join(', ')} (${o.country})` : parts.join(', ');
}

/** The one-line text after the address: location, ASN and organisation, tab-separated (the record's part alone). */
function lineAfterAddress(o: LegacyPlace): string {
  return `${[locationText(o), dash(o.asn), dash(o.org ? o.org.replace(/^AS\d+ /, '') : null)].join('\t')}\n`;
}

/**
 * The one-line texts of `GET /{ip}` under one serving snapshot: what follows
 * the address is the same for every address of a record, so it is kept per
 * record id (a fixed number of slots) and only the address is joined per
 * answer. A new snapshot comes with a new memo (src/lookup/serving.ts).
 */
export class LegacyLines {
  /** Kept like the v1 body tails (record-memo.ts): the records asked most often stay. Made on the first hit. */
  private tails: RecordMemo<string> | null = null;

  /** `reader`: the index whose hits are kept (null: none); `slots`: records whose line is kept (a power of two). */
  constructor(
    private readonly reader: object | null,
    private readonly slots = LINE_SLOTS,
  ) {}

  /** The one line for a hit of an explicit lookup. */
  line(hit: LookupHit): string {
    if (!isHitOf(hit, this.reader)) return legacyText(legacyPlace(hit), false, false);
    let tails = this.tails;
    if (tails === null) tails = this.tails = new RecordMemo<string>(this.slots);
    const id = hit.recordId;
    tails.touch(id);
    let at = tails.find(id);
    let tail = at >= 0 ? tails.value(at, 0) : undefined;
    if (tail === undefined) {
      tail = lineAfterAddress(legacyPlace(hit));
      at = tails.admit(id, 0);
      if (at >= 0) tails.set(at, 0, tail);
    }
    return `${hit.ip}\t${tail}`;
  }
}

/**
 * Text for a legacy route. Without detail: one line (the IP on the
 * current-IP route; ip, location, ASN and organisation tab-separated on
 * /{ip}), which needs only the place. With detail: four labelled lines, plus
 * the operator domain when known (the whole object).
 */
export function legacyText(o: LegacyPlace & { domain?: string | null }, detail: boolean, currentRoute: boolean): string {
  if (!detail) {
    if (currentRoute) return `${o.ip}\n`;
    return `${o.ip}\t${lineAfterAddress(o)}`;
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
