/**
 * What a provider JSON reader produces: one entry per published prefix, in
 * the publisher's order of preference (the first entry for a prefix wins).
 */
import type { Category, GeoValue } from '../../sink.ts';

/** One published prefix with what the publisher says about it. */
export interface ProviderEntry {
  /** The prefix as published (checked by the reporter, not the reader). */
  prefix: unknown;
  /** Where in the document it was found, for skip messages (e.g. `hooks[2]`). */
  where: string;
  /** Overrides the manifest category (a format mapping its own sections). */
  category?: Category;
  service?: string;
  region?: string;
  /** Location facts published with the prefix (geofeed-style formats). */
  geo?: GeoValue;
}

/** Raised by a reader when the document is not the expected shape at all. */
export class ShapeError extends Error {}

/** Reads one publisher's JSON document into entries; throws ShapeError on a wrong shape. */
export type ProviderFormat = (doc: unknown) => ProviderEntry[];

/** Entries for every member of a published prefix array (`where` gets the index appended). */
export function entriesOf(list: unknown[], where: string, extra: Omit<ProviderEntry, 'prefix' | 'where'> = {}): ProviderEntry[] {
  return list.map((prefix, i) => ({ prefix, where: `${where}[${i}]`, ...extra }));
}

/** The array under `key` of a JSON object, or a ShapeError naming what was expected. */
export function requireArray(doc: unknown, key: string, what = 'the document'): unknown[] {
  const value = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as Record<string, unknown>)[key] : undefined;
  if (!Array.isArray(value)) throw new ShapeError(`expected ${what} to be an object with a "${key}" array`);
  return value;
}
