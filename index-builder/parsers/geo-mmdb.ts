/**
 * `geo-mmdb`: a MaxMind DB city database (GeoLite2-City schema or the
 * ip-location-db schema), every network reported to `sink.geo`.
 */
import type { FeedParser } from '../feed/source.ts';
import type { GeoValue } from '../sink.ts';
import { MmdbFormatError, type MmdbValue } from '../mmdb/decoder.ts';
import { openMmdb, walkNetworks, type MmdbDatabase } from '../mmdb/tree.ts';
import { timezoneAt } from '../geo-timezone.ts';

type Rec = { [key: string]: MmdbValue };

function isRec(v: MmdbValue | undefined): v is Rec {
  return v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array);
}

function text(v: MmdbValue | undefined): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** `names.en` of a GeoLite2 place record. */
function englishName(v: MmdbValue | undefined): string | undefined {
  return isRec(v) && isRec(v.names) ? text(v.names.en) : undefined;
}

function countryCode(v: MmdbValue | undefined): string | undefined {
  const s = text(v);
  return s !== undefined && s.length === 2 ? s.toUpperCase() : undefined;
}

/**
 * Coordinates rounded to 4 decimals (~11 m): dbip stores float32, so
 * 37.422 comes back as 37.422000885009766; the feeds publish 4 decimals.
 */
function coordinate(v: MmdbValue | undefined, limit: number): number | undefined {
  if (typeof v !== 'number' || !Number.isFinite(v) || Math.abs(v) > limit) return undefined;
  return Math.round(v * 1e4) / 1e4;
}

/** Maps one decoded record of either schema to a GeoValue (undefined when it holds nothing). */
export function geoValueOf(rec: MmdbValue): GeoValue | undefined {
  if (!isRec(rec)) return undefined;
  const g: GeoValue = {};
  if ('country_code' in rec || 'state1' in rec || 'latitude' in rec) {
    // ip-location-db city schema.
    g.countryCode = countryCode(rec.country_code);
    g.region = text(rec.state1);
    g.city = text(rec.city);
    g.postalCode = text(rec.postcode);
    g.latitude = coordinate(rec.latitude, 90);
    g.longitude = coordinate(rec.longitude, 180);
    g.timezone = text(rec.timezone);
  } else {
    // GeoLite2-City schema; registered_country stands in when no country is located.
    const country = isRec(rec.country) ? rec.country : isRec(rec.registered_country) ? rec.registered_country : undefined;
    g.countryCode = countryCode(country?.iso_code);
    g.region = Array.isArray(rec.subdivisions) ? englishName(rec.subdivisions[0]) : undefined;
    g.city = englishName(rec.city);
    g.postalCode = isRec(rec.postal) ? text(rec.postal.code) : undefined;
    if (isRec(rec.location)) {
      g.latitude = coordinate(rec.location.latitude, 90);
      g.longitude = coordinate(rec.location.longitude, 180);
      g.timezone = text(rec.location.time_zone);
    }
  }
  if (g.latitude === undefined || g.longitude === undefined) {
    g.latitude = undefined;
    g.longitude = undefined;
  } else if (g.timezone === undefined) {
    g.timezone = timezoneAt(g.latitude, g.longitude);
  }
  for (const k of Object.keys(g) as (keyof GeoValue)[]) if (g[k] === undefined) delete g[k];
  return Object.keys(g).length === 0 ? undefined : g;
}

/** Opens the database or fails the source with the format problem. */
function open(bytes: Uint8Array, fail: (reason: string) => never): MmdbDatabase {
  try {
    return openMmdb(bytes);
  } catch (e) {
    if (e instanceof MmdbFormatError) fail(`not a MaxMind DB: ${e.message}`);
    throw e;
  }
}

/** Reports every network of the database with its location. */
export const parse: FeedParser = async (ctx, sink) => {
  const db = open(ctx.readBytes(), (r) => ctx.fail(r));
  if (db.metadata.buildEpoch !== undefined) ctx.reportDate(db.metadata.buildEpoch);
  // Many networks share one record: decode and map each data offset once.
  const byOffset = new Map<number, GeoValue | null>();
  const valueAt = (offset: number): GeoValue | null => {
    let value = byOffset.get(offset);
    if (value === undefined) {
      value = geoValueOf(db.decoder.decode(offset)) ?? null;
      byOffset.set(offset, value);
    }
    return value;
  };
  // A sink that stores IPv6 bounds as words takes them so: no BigInt per bound.
  const geo6Words = sink.geo6Words?.bind(sink);
  try {
    walkNetworks(
      db,
      (family, start, end, offset) => {
        const value = valueAt(offset);
        if (value === null) return;
        sink.geo(family, start, end, value);
        ctx.rows++;
      },
      geo6Words &&
        ((start, end, offset) => {
          const value = valueAt(offset);
          if (value === null) return;
          geo6Words(start, end, value);
          ctx.rows++;
        }),
    );
  } catch (e) {
    if (e instanceof MmdbFormatError) ctx.fail(`corrupt MaxMind DB: ${e.message}`);
    throw e;
  }
  if (ctx.rows === 0) ctx.fail('MaxMind DB holds no located networks');
};
