/**
 * `geofeed`: RFC 8805 self-published geofeed CSV
 * `prefix,country,region,city,postal` with `#` comments. Reports locations,
 * and the manifest's `category`/`provider` for every prefix when given.
 *
 * Region: RFC 8805 writes ISO 3166-2 codes (`US-NY`); they are reported as
 * the subdivision's name ("New York", matching the MMDB feeds' names), or as
 * published when the code is unknown. The provider value's `region` keeps
 * the published code, which is the provider's own location label.
 */
import { iso31662 } from 'iso-3166';
import type { FeedParser } from '../feed/source.ts';
import { CATEGORIES, type Category, type GeoValue } from '../sink.ts';
import { splitCsvLine } from '../feed/csv-fields.ts';
import { parseCidr } from '../../src/net/ip.ts';

const SUBDIVISION_NAMES = new Map(iso31662.map((s) => [s.code.toUpperCase(), s.name]));

/** A readable name for an ISO 3166-2 code, or the text as published. */
export function regionName(code: string): string {
  return SUBDIVISION_NAMES.get(code.toUpperCase()) ?? code;
}

/** The location of one row's columns 1..4; a reason string when invalid. */
export function geofeedValue(f: string[]): GeoValue | string {
  const g: GeoValue = {};
  const cc = (f[1] ?? '').trim();
  if (cc !== '') {
    if (!/^[A-Za-z]{2}$/.test(cc)) return `bad country code "${cc}"`;
    g.countryCode = cc.toUpperCase();
  }
  const region = (f[2] ?? '').trim();
  if (region !== '') g.region = regionName(region);
  const city = (f[3] ?? '').trim();
  if (city !== '') g.city = city;
  const postal = (f[4] ?? '').trim();
  if (postal !== '') g.postalCode = postal;
  return g;
}

/** The manifest's category option, validated (undefined when absent). */
function categoryOption(value: unknown, fail: (r: string) => never): Category | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !(CATEGORIES as readonly string[]).includes(value)) {
    fail(`unknown category "${String(value)}" (expected one of ${CATEGORIES.join(', ')})`);
  }
  return value as Category;
}

/** Reports each prefix's location (and category/provider when configured). */
export const parse: FeedParser = async (ctx, sink) => {
  const category = categoryOption(ctx.options.category, (r) => ctx.fail(r));
  const provider = typeof ctx.options.provider === 'string' && ctx.options.provider !== '' ? ctx.options.provider : undefined;
  let badStreak = 0;
  for await (const [line, n] of ctx.lines()) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.charCodeAt(0) === 35) {
      // Publishers that date their geofeed write `# Last modified: 2025-07-24 10:00:06.525037`.
      const modified = /^#\s*Last modified:\s*(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})/i.exec(trimmed);
      if (modified) ctx.reportDate(modified[1]);
      continue;
    }
    const f = splitCsvLine(trimmed);
    const cidr = f ? parseCidr(f[0].trim()) : null;
    const value = f && cidr ? geofeedValue(f) : 'expected prefix,country,region,city,postal';
    if (!f || !cidr || typeof value === 'string') {
      ctx.skip(n, f && !cidr ? `bad prefix "${f[0]}"` : (value as string));
      if (ctx.rows === 0 && ++badStreak >= 10) ctx.fail('not an RFC 8805 geofeed: no line parses', n);
      continue;
    }
    badStreak = 0;
    // A row may carry no location at all (`prefix,,,,`), only the category.
    if (Object.keys(value).length > 0) sink.geo(cidr.family, cidr.start, cidr.end, value);
    if (category) {
      const region = (f[2] ?? '').trim();
      sink.provider(cidr.family, cidr.start, cidr.end, {
        category,
        ...(provider ? { provider } : {}),
        ...(region ? { region } : {}),
      });
    }
    ctx.rows++;
  }
  if (ctx.rows === 0) ctx.fail('no geofeed entries found');
};
