/**
 * What the MMDB export stores for one index record: the GeoIP2-City,
 * GeoLite2-ASN and GeoIP2-Anonymous-IP field names existing configurations
 * read, plus ipintel's own v1 objects (network, routing, score,
 * classification) under their v1 names. The mapping is documented in
 * docs/deployment.md. MMDB has no null: a fact the index lacks is a key
 * left out, never an invented value.
 */
import { MmdbUint, type MmdbInput } from '../../../index-builder/index.ts';
import type { IndexRecord, LookupHit } from '../../index/record.ts';
import { countryName } from '../../lookup/country.ts';
import { buildV1, type V1Context } from '../../lookup/v1.ts';

type MmdbMap = { [key: string]: MmdbInput };

/** The v1 objects stored under their own names (the rest depend on the address, the clock or the policy). */
export const OWN_FIELDS: ReadonlySet<string> = new Set(['network', 'routing', 'score', 'classification']);

/** Whether a record holds any fact at all (one that holds none is left out of the database). */
export function hasFacts(record: IndexRecord): boolean {
  return (
    record.flags !== 0 ||
    record.geo !== null ||
    record.asn !== null ||
    record.allocation !== null ||
    record.route !== null ||
    record.provider !== null ||
    record.crawler !== null ||
    record.specialUse !== null ||
    record.threatList !== null ||
    record.threatFeed !== null ||
    record.networkType !== null ||
    record.override !== undefined
  );
}

/** The database value of a record, or null when it holds no fact; `ctx` is the API's context for an anonymous caller. */
export function mmdbRecord(record: IndexRecord, ctx: V1Context): MmdbMap | null {
  if (!hasFacts(record)) return null;
  const out: MmdbMap = {};
  const g = record.geo;
  if (g) {
    const country = countryOf(g.countryCode);
    if (country) out.country = country;
    if (g.region) out.subdivisions = [{ names: { en: g.region } }];
    if (g.city) out.city = { names: { en: g.city } };
    if (g.postalCode) out.postal = { code: g.postalCode };
    const location: MmdbMap = {};
    if (g.latitude !== null && g.longitude !== null) {
      location.latitude = g.latitude;
      location.longitude = g.longitude;
    }
    if (g.timezone) location.time_zone = g.timezone;
    if (Object.keys(location).length > 0) out.location = location;
  }
  const registered = countryOf(record.allocation?.countryCode ?? null);
  if (registered) out.registered_country = registered;
  if (record.asn) {
    out.autonomous_system_number = new MmdbUint(record.asn.asn, 32);
    if (record.asn.name) out.autonomous_system_organization = record.asn.name;
  }
  // The API's own objects, through the same function as the route (a hand-made hit: no address is read).
  const hit: LookupHit = { family: 4, ip: '', rangeStart: '', rangeEnd: '', recordId: -1, record };
  const own = buildV1(hit, ctx, OWN_FIELDS);
  const c = own.classification as Record<string, unknown>;
  // GeoIP2-Anonymous-IP: a key is written only when true, as MaxMind does (absent reads as false there).
  const anonymous: Array<[string, boolean]> = [
    ['is_anonymous', c.is_vpn === true || c.is_tor === true || c.is_proxy === true || c.is_privacy_relay === true],
    ['is_anonymous_vpn', c.is_vpn === true],
    ['is_hosting_provider', c.is_datacenter === true],
    ['is_public_proxy', c.proxy_type === 'proxy'],
    ['is_tor_exit_node', c.is_tor === true],
  ];
  for (const [name, set] of anonymous) if (set) out[name] = true;
  // A use no evidence names is a key left out, as MaxMind leaves out what it does not know.
  if (c.usage_type === 'unknown') own.classification = Object.fromEntries(Object.entries(c).filter(([k]) => k !== 'usage_type'));
  for (const field of OWN_FIELDS) {
    const v = withoutNulls(own[field]);
    if (v !== undefined) out[field] = v;
  }
  return out;
}

/** GeoIP2's country object of an ISO code; null for none or one without a name. */
function countryOf(code: string | null): MmdbMap | null {
  if (!code) return null;
  const name = countryName(code);
  return name ? { iso_code: code, names: { en: name } } : { iso_code: code };
}

/** A JSON value as an MMDB value: null members left out, counts as uint32, other numbers as doubles. */
export function withoutNulls(v: unknown): MmdbInput | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 && v < 2 ** 32 ? new MmdbUint(v, 32) : v;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(withoutNulls).filter((x): x is MmdbInput => x !== undefined);
  const out: MmdbMap = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const m = withoutNulls(x);
    if (m !== undefined) out[k] = m;
  }
  return out;
}
