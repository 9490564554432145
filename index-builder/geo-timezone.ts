/**
 * IANA time zone from coordinates, for feeds (dbip) that leave the zone
 * empty. Lookups are cached per coordinate pair because a city's
 * coordinates repeat across many ranges.
 */
import tzLookup from '@photostructure/tz-lookup';

// Keyed by a number where the coordinates have at most 4 decimals (what the
// parsers round to): a text key per pair kept hundreds of thousands of strings.
const cache = new Map<number | string, string | undefined>();
/** One string per zone name, however many coordinates share it. */
const zones = new Map<string, string>();

function keyOf(latitude: number, longitude: number): number | string {
  const lat = Math.round(latitude * 1e4);
  const lon = Math.round(longitude * 1e4);
  if (lat / 1e4 === latitude && lon / 1e4 === longitude && Math.abs(lat) <= 900_000 && Math.abs(lon) <= 1_800_000 && !Object.is(latitude, -0) && !Object.is(longitude, -0)) {
    return (lat + 900_000) * 3_600_001 + (lon + 1_800_000);
  }
  return `${latitude},${longitude}`;
}

/** The IANA zone at a coordinate, or undefined when the coordinate is invalid. */
export function timezoneAt(latitude: number, longitude: number): string | undefined {
  const key = keyOf(latitude, longitude);
  if (cache.has(key)) return cache.get(key);
  let zone: string | undefined;
  try {
    zone = tzLookup(latitude, longitude);
  } catch {
    zone = undefined; // out-of-range coordinates: no zone rather than a failed build
  }
  if (zone !== undefined) {
    const known = zones.get(zone);
    if (known === undefined) zones.set(zone, zone);
    else zone = known;
  }
  cache.set(key, zone);
  return zone;
}
