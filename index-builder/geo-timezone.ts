/**
 * IANA time zone from coordinates, for feeds (dbip) that leave the zone
 * empty. Lookups are cached per coordinate pair because a city's
 * coordinates repeat across many ranges.
 */
import tzLookup from '@photostructure/tz-lookup';

const cache = new Map<string, string | undefined>();

/** The IANA zone at a coordinate, or undefined when the coordinate is invalid. */
export function timezoneAt(latitude: number, longitude: number): string | undefined {
  const key = `${latitude},${longitude}`;
  if (cache.has(key)) return cache.get(key);
  let zone: string | undefined;
  try {
    zone = tzLookup(latitude, longitude);
  } catch {
    zone = undefined; // out-of-range coordinates: no zone rather than a failed build
  }
  cache.set(key, zone);
  return zone;
}
