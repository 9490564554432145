/**
 * Turns ProviderEntry lists into sink calls: parses each prefix, keeps one
 * value per distinct prefix (first entry wins), fills manifest defaults.
 */
import type { SourceContext } from '../../feed/source.ts';
import type { BuildSink, Category, GeoValue } from '../../sink.ts';
import { parseCidr } from '../../../src/net/ip.ts';
import { failIfEmpty, quoted, reportCategorized } from '../cidr-list.ts';
import { ShapeError, type ProviderEntry, type ProviderFormat } from './types.ts';

/** Manifest-level values applied where an entry has none. */
export interface EntryDefaults {
  category: Category;
  provider?: string;
}

/** Top-level keys publishers put their document's date under (AWS, Google, Apple, OpenAI, Oracle, Atlassian, Vultr). */
const DOCUMENT_DATE_KEYS = ['createDate', 'creationTime', 'creationDate', 'last_updated_timestamp', 'updated'] as const;

/** Reports the date a JSON document states about itself, when it has one of the usual keys. */
export function reportDocumentDate(ctx: SourceContext, doc: unknown): void {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return;
  for (const key of DOCUMENT_DATE_KEYS) {
    const value = (doc as Record<string, unknown>)[key];
    if (typeof value !== 'string') continue;
    // AWS writes `2026-08-21-07-37-05`.
    const aws = /^(\d{4}-\d{2}-\d{2})-(\d{2})-(\d{2})-(\d{2})$/.exec(value);
    ctx.reportDate(aws ? `${aws[1]}T${aws[2]}:${aws[3]}:${aws[4]}Z` : value);
    return;
  }
}

/** Runs a reader over the source's JSON, turning a ShapeError into a FeedError naming the file. */
export function readEntries(ctx: SourceContext, format: ProviderFormat): ProviderEntry[] {
  const doc = ctx.readJson();
  reportDocumentDate(ctx, doc);
  try {
    return format(doc);
  } catch (e) {
    if (e instanceof ShapeError) ctx.fail(e.message);
    throw e;
  }
}

/** Reports entries to the sink (one per distinct prefix); skips bad prefixes; fails when none parse. */
export function reportEntries(
  ctx: SourceContext,
  sink: BuildSink,
  entries: Iterable<ProviderEntry>,
  defaults: EntryDefaults,
): void {
  const seen = new Set<string>();
  for (const entry of entries) {
    const cidr = typeof entry.prefix === 'string' ? parseCidr(entry.prefix.trim()) : null;
    if (!cidr) {
      const shown = typeof entry.prefix === 'string' ? entry.prefix : JSON.stringify(entry.prefix) ?? 'undefined';
      ctx.skip(0, `${entry.where}: not a CIDR: ${quoted(shown)}`);
      continue;
    }
    const key = `${cidr.family}:${cidr.start}/${cidr.len}`;
    if (seen.has(key)) continue;
    seen.add(key);
    reportCategorized(sink, cidr.family, cidr.start, cidr.end, {
      category: entry.category ?? defaults.category,
      provider: defaults.provider,
      service: entry.service,
      region: entry.region,
    });
    const geo = entry.geo && cleanGeo(entry.geo);
    if (geo) sink.geo(cidr.family, cidr.start, cidr.end, geo);
    ctx.rows++;
  }
  failIfEmpty(ctx, 'prefixes');
}

/** The geo value without empty fields (country upper-cased), or undefined when nothing is left. */
export function cleanGeo(geo: GeoValue): GeoValue | undefined {
  const out: GeoValue = {};
  const cc = geo.countryCode?.trim().toUpperCase();
  if (cc && /^[A-Z]{2}$/.test(cc)) out.countryCode = cc;
  const region = geo.region?.trim();
  if (region) out.region = region;
  const city = geo.city?.trim();
  if (city) out.city = city;
  const postal = geo.postalCode?.trim();
  if (postal) out.postalCode = postal;
  if (geo.latitude !== undefined && Number.isFinite(geo.latitude)) out.latitude = geo.latitude;
  if (geo.longitude !== undefined && Number.isFinite(geo.longitude)) out.longitude = geo.longitude;
  const timezone = geo.timezone?.trim();
  if (timezone) out.timezone = timezone;
  return Object.keys(out).length > 0 ? out : undefined;
}
