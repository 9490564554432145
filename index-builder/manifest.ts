/**
 * Reading a feed manifest (`{"sources":[{"type","path",...}]}`): paths are
 * relative to the manifest's folder; every entry is checked before any
 * parsing starts so a typo fails fast with the entry's position.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { ManifestSource } from './sink.ts';
import { isKnownType, PARSERS } from './parsers/index.ts';

/** A manifest entry with its absolute path. */
export interface ResolvedSource {
  options: ManifestSource;
  absPath: string;
  /** Path for messages (as written, relative to the manifest). */
  displayPath: string;
}

/** A manifest problem (unknown type, missing file, bad JSON). */
export class ManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
  }
}

/** Loads and validates a manifest file. */
export function loadManifest(manifestPath: string): ResolvedSource[] {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(manifestPath, 'utf8'));
  } catch (e) {
    throw new ManifestError(`${manifestPath}: ${(e as Error).message}`);
  }
  const sources = (doc as { sources?: unknown })?.sources;
  if (!Array.isArray(sources)) throw new ManifestError(`${manifestPath}: expected {"sources": [...]}`);
  const base = dirname(resolve(manifestPath));
  return sources.map((entry, i) => resolveEntry(entry, i, base, manifestPath));
}

/** `YYYY-MM-DD` naming a real day. */
function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const d = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(text);
}

/** Validates one entry and resolves its path against `base`. */
export function resolveEntry(entry: unknown, i: number, base: string, where: string): ResolvedSource {
  const at = `${where}: sources[${i}]`;
  if (typeof entry !== 'object' || entry === null) throw new ManifestError(`${at}: not an object`);
  const e = entry as ManifestSource;
  if (typeof e.type !== 'string' || !isKnownType(e.type)) {
    throw new ManifestError(`${at}: unknown type ${JSON.stringify(e.type)} (known: ${Object.keys(PARSERS).join(', ')})`);
  }
  if (typeof e.path !== 'string' || e.path === '') throw new ManifestError(`${at}: missing "path"`);
  if (e.date !== undefined && (typeof e.date !== 'string' || !isCalendarDate(e.date))) {
    throw new ManifestError(`${at}: "date" must be a YYYY-MM-DD date, got ${JSON.stringify(e.date)}`);
  }
  const absPath = isAbsolute(e.path) ? e.path : resolve(base, e.path);
  if (!existsSync(absPath)) throw new ManifestError(`${at}: file not found: ${absPath}`);
  return { options: e, absPath, displayPath: e.path };
}
