/**
 * `geo-csv`: ip-location-db city CSV
 * `start,end,country_code,state1,state2,city,postcode,latitude,longitude,timezone`
 * (addresses as text, or integers in the `-num` variants).
 */
import type { FeedParser } from '../feed/source.ts';
import type { GeoValue } from '../sink.ts';
import { splitCsvLine } from '../feed/csv-fields.ts';
import { numericFamilyHint, parseRangeFields } from '../feed/range-fields.ts';
import { timezoneAt } from '../geo-timezone.ts';

const COLUMNS = 10;

function coordinate(text: string, limit: number): number | undefined | null {
  if (text === '') return undefined;
  const v = Number(text);
  return Number.isFinite(v) && Math.abs(v) <= limit ? v : null;
}

/** The location of one row's columns 2..9; a reason string when invalid. */
export function geoValueOfRow(f: string[]): GeoValue | string {
  const g: GeoValue = {};
  const cc = f[2];
  if (cc !== '') {
    if (!/^[A-Za-z]{2}$/.test(cc)) return `bad country code "${cc}"`;
    g.countryCode = cc.toUpperCase();
  }
  if (f[3] !== '') g.region = f[3];
  if (f[5] !== '') g.city = f[5];
  if (f[6] !== '') g.postalCode = f[6];
  const lat = coordinate(f[7], 90);
  const lon = coordinate(f[8], 180);
  if (lat === null || lon === null) return `bad coordinates "${f[7]},${f[8]}"`;
  if (lat !== undefined && lon !== undefined) {
    g.latitude = lat;
    g.longitude = lon;
  }
  const tz = f[9] !== '' ? f[9] : g.latitude !== undefined ? timezoneAt(g.latitude, g.longitude!) : undefined;
  if (tz !== undefined) g.timezone = tz;
  return g;
}

/** Reports each range with its location. */
export const parse: FeedParser = async (ctx, sink) => {
  const hint = numericFamilyHint(ctx.path, ctx.options.family);
  let badStreak = 0;
  for await (const [line, n] of ctx.lines()) {
    if (line === '' || line.charCodeAt(0) === 35) continue;
    const f = splitCsvLine(line);
    if (n === 1 && f && /^[a-z_ ]+$/i.test(f[0])) continue; // header row
    let reason: string;
    if (!f || f.length !== COLUMNS) reason = `expected ${COLUMNS} columns`;
    else {
      const range = parseRangeFields(f[0], f[1], hint);
      const value = typeof range === 'string' ? range : geoValueOfRow(f);
      if (typeof range !== 'string' && typeof value !== 'string') {
        // Rows without any location (unknown ranges) say nothing: not reported.
        if (Object.keys(value).length > 0) {
          sink.geo(range.family, range.start, range.end, value);
          ctx.rows++;
        }
        badStreak = 0;
        continue;
      }
      reason = typeof range === 'string' ? range : (value as string);
    }
    ctx.skip(n, reason);
    if (ctx.rows === 0 && ++badStreak >= 10) ctx.fail('not an ip-location-db city CSV: no line parses', n);
  }
  if (ctx.rows === 0) ctx.fail('no located ranges found');
};
