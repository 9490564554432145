/**
 * Vultr (Constant) geofeed JSON: `{"asn":20473,"subnets":[{"ip_prefix",
 * "alpha2code","region","city","postal_code"}]}`. Each subnet is a provider
 * range (region = the ISO 3166-2 region code) plus its location.
 * Quirk: some regions repeat the country (`US-US-MO`); the doubled prefix is
 * dropped (`US-MO`).
 */
import { isObject, textOf } from './json-shape.ts';
import { requireArray, type ProviderFormat } from './types.ts';

/** `US-US-MO` → `US-MO`; other region text unchanged. */
export function normalizeRegion(region: string | undefined, country: string | undefined): string | undefined {
  if (!region || !country) return region;
  const doubled = `${country.toUpperCase()}-${country.toUpperCase()}-`;
  return region.toUpperCase().startsWith(doubled) ? region.slice(country.length + 1) : region;
}

/** Reads Vultr's geofeed JSON. */
export const readVultrGeofeed: ProviderFormat = (doc) =>
  requireArray(doc, 'subnets').map((item, i) => {
    const rec = isObject(item) ? item : {};
    const countryCode = textOf(rec.alpha2code);
    const region = normalizeRegion(textOf(rec.region), countryCode);
    return {
      prefix: rec.ip_prefix,
      where: `subnets[${i}].ip_prefix`,
      region,
      geo: { countryCode, region, city: textOf(rec.city), postalCode: textOf(rec.postal_code) },
    };
  });
