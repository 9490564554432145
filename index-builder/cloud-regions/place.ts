/**
 * Where a cloud region is, as its provider documents it: country, ISO
 * 3166-2 subdivision where known, and the city (with its coordinates) only
 * where the provider names one. A region whose provider names only a country
 * (e.g. AWS "Middle East (UAE)") gets only the country.
 */
import type { GeoValue } from '../sink.ts';
import { timezoneAt } from '../geo-timezone.ts';
import { regionName } from '../parsers/geofeed.ts';

/** A documented region location. */
export interface RegionPlace {
  /** ISO 3166-1 alpha-2. */
  country: string;
  /** ISO 3166-2 code of the subdivision. */
  subdivision?: string;
  city?: string;
  latitude?: number;
  longitude?: number;
}

/** A place: country, then subdivision, city and coordinates when documented. */
export function at(country: string, subdivision?: string, city?: string, latitude?: number, longitude?: number): RegionPlace {
  return { country, subdivision, city, latitude, longitude };
}

/** One provider's table: region name as published → place. */
export type RegionTable = Readonly<Record<string, RegionPlace>>;

const geoMemo = new WeakMap<RegionPlace, GeoValue>();

/**
 * The location a provider's region name places its ranges in, or undefined
 * when the table does not know the name (global scopes such as AWS `GLOBAL`
 * or GCP `global`, empty Azure regions, new regions): the geolocation
 * database then keeps its answer.
 */
export function regionGeo(table: RegionTable, region: string | undefined): GeoValue | undefined {
  if (region === undefined || !Object.hasOwn(table, region)) return undefined;
  const p = table[region];
  let g = geoMemo.get(p);
  if (!g) {
    g = { countryCode: p.country };
    if (p.subdivision) g.region = regionName(p.subdivision);
    if (p.city) g.city = p.city;
    if (p.latitude !== undefined && p.longitude !== undefined) {
      g.latitude = p.latitude;
      g.longitude = p.longitude;
      g.timezone = timezoneAt(p.latitude, p.longitude);
    }
    geoMemo.set(p, g);
  }
  return g;
}
