/**
 * An override laid over an index answer: the fields it names replace the
 * index's, everything else is the index's own. Classification booleans
 * become the record flags a feed would have set (so scoring derives the
 * signals, usage and risk exactly as for the feed); the rest travels as
 * OverrideFacts for scoring and the v1 object.
 */
import type { OverrideFields, OverrideFlag } from '../../contract/overrides.ts';
import type { EvidenceKind } from '../../index/evidence-kinds.ts';
import { Flag, type GeoInfo, type IndexRecord, type LookupHit, type OverrideFacts } from '../../index/record.ts';
import type { IndexReader } from '../../index/reader.ts';
import type { OverrideMatch } from './table.ts';
import type { OverrideLookup } from './layered.ts';

/** Per boolean: the flag `true` sets, the flags `false` clears (every flag that makes the boolean true), and its evidence kind. */
const FLAG_OF: Readonly<Record<OverrideFlag, { set: number; clear: number; kind: EvidenceKind }>> = {
  is_datacenter: { set: Flag.DATACENTER, clear: Flag.DATACENTER | Flag.DATACENTER_ASN, kind: 'datacenter' },
  is_vpn: { set: Flag.VPN, clear: Flag.VPN | Flag.VPN_ASN, kind: 'vpn' },
  is_proxy: { set: Flag.PROXY, clear: Flag.PROXY | Flag.VPN | Flag.VPN_ASN | Flag.TOR_EXIT, kind: 'proxy' },
  is_tor: { set: Flag.TOR_EXIT, clear: Flag.TOR_EXIT, kind: 'tor' },
  is_privacy_relay: { set: Flag.PRIVACY_RELAY, clear: Flag.PRIVACY_RELAY, kind: 'relays' },
  is_mobile: { set: Flag.MOBILE, clear: Flag.MOBILE, kind: 'network_type' },
  is_known_crawler: { set: Flag.CRAWLER_RANGE, clear: Flag.CRAWLER_RANGE, kind: 'crawlers' },
};
const FLAG_NAMES = Object.keys(FLAG_OF) as OverrideFlag[];

const NO_GEO: GeoInfo = Object.freeze({ countryCode: null, region: null, city: null, postalCode: null, latitude: null, longitude: null, timezone: null });

/** The record flags after an override's booleans: clears first, then sets (so `is_proxy: false, is_tor: true` keeps Tor). */
export function overrideFlags(flags: number, fields: Readonly<OverrideFields>): number {
  let f = flags;
  for (const name of FLAG_NAMES) if (fields[name] === false) f &= ~FLAG_OF[name].clear;
  for (const name of FLAG_NAMES) if (fields[name] === true) f |= FLAG_OF[name].set;
  return f;
}

function geoOf(base: GeoInfo | null, o: Readonly<OverrideFields>): GeoInfo | null {
  if (o.country_code === undefined && o.region === undefined && o.city === undefined && o.latitude === undefined && o.longitude === undefined && o.timezone_name === undefined) return base;
  const g = base ?? NO_GEO;
  return {
    countryCode: o.country_code ?? g.countryCode,
    region: o.region ?? g.region,
    city: o.city ?? g.city,
    postalCode: g.postalCode,
    latitude: o.latitude ?? g.latitude,
    longitude: o.longitude ?? g.longitude,
    timezone: o.timezone_name ?? g.timezone,
  };
}

/** What scoring and the v1 object read of an override beyond the overlaid facts. */
function factsOf(match: OverrideMatch): OverrideFacts {
  const o = match.fields;
  return {
    cidr: match.cidr,
    note: o.note ?? null,
    org: o.org ?? null,
    usageType: o.usage_type ?? null,
    category: o.category ?? null,
    risk: o.risk ?? 0,
    verdict: o.verdict ?? null,
    kinds: FLAG_NAMES.filter((n) => o[n] !== undefined).map((n) => FLAG_OF[n].kind),
  };
}

/** The record an override makes of an index record (a plain object; the index record is read once). */
export function overlayRecord(record: IndexRecord, match: OverrideMatch): IndexRecord {
  const o = match.fields;
  const asn = record.asn;
  const provider = record.provider;
  return {
    flags: overrideFlags(record.flags, o),
    geo: geoOf(record.geo, o),
    asn: asn && o.org !== undefined ? { asn: asn.asn, name: o.org } : asn,
    allocation: record.allocation,
    route: record.route,
    provider: o.operator === undefined ? provider : { name: o.operator, category: provider?.category ?? o.category ?? '', service: provider?.service ?? null, region: provider?.region ?? null },
    crawler: o.is_known_crawler === false ? null : record.crawler,
    specialUse: record.specialUse,
    threatList: record.threatList,
    threatFeed: record.threatFeed,
    networkType: record.networkType,
    override: factsOf(match),
  };
}

/**
 * A hit answered under an override. It names no index: every memo keyed by
 * record id (v1 bodies, legacy lines) passes it by, so no override answer
 * is ever kept under an index record's id.
 */
class OverriddenHit implements LookupHit {
  private overlaid: IndexRecord | null = null;
  constructor(
    private readonly hit: LookupHit,
    private readonly match: OverrideMatch,
  ) {}
  get family() {
    return this.hit.family;
  }
  get ip() {
    return this.hit.ip;
  }
  get rangeStart() {
    return this.hit.rangeStart;
  }
  get rangeEnd() {
    return this.hit.rangeEnd;
  }
  get recordId() {
    return this.hit.recordId;
  }
  get record(): IndexRecord {
    return (this.overlaid ??= overlayRecord(this.hit.record, this.match));
  }
  toJSON() {
    return { family: this.family, ip: this.ip, rangeStart: this.rangeStart, rangeEnd: this.rangeEnd, recordId: this.recordId, record: this.record };
  }
}

/** An index hit with the override covering its address laid over it (the hit itself when none does). */
export function withOverride(hit: LookupHit, overrides: OverrideLookup, ip: string): LookupHit {
  const match = overrides.find(ip);
  return match === null ? hit : new OverriddenHit(hit, match);
}

/**
 * The one lookup of an address text: the index, then the operator's
 * overrides (HTTP routes, `bun run lookup` and the crawler check all come
 * here). Null when the text is not an address.
 */
export function lookupAddress(index: IndexReader, overrides: OverrideLookup, ip: string): LookupHit | null {
  const hit = index.lookup(ip);
  if (hit === null || overrides.size === 0) return hit;
  return withOverride(hit, overrides, ip);
}
