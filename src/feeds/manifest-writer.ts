/**
 * Writing feeds.json after an update: one entry per catalog feed that has a
 * good copy on disk, plus the operator's own entries (paths the catalog does
 * not know) kept as they were. Written atomically.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ManifestSource } from '../../index-builder/index.ts';
import { writeFileAtomic } from '../file-io/atomic-file.ts';
import { manifestEntryOf, type CatalogFeed } from './catalog.ts';

/** Entries of an existing feeds.json whose path the catalog does not list (hand-added feeds). */
export function operatorEntries(manifestPath: string, catalog: CatalogFeed[]): ManifestSource[] {
  if (!existsSync(manifestPath)) return [];
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(manifestPath, 'utf8'));
  } catch (e) {
    // Refuse to overwrite a manifest we cannot read: it may hold entries the operator wrote by hand.
    throw new Error(`${manifestPath}: cannot read the existing manifest (${(e as Error).message}); fix or remove it`);
  }
  const sources = (doc as { sources?: unknown })?.sources;
  if (!Array.isArray(sources)) throw new Error(`${manifestPath}: expected {"sources": [...]}; fix or remove it`);
  const known = new Set(catalog.map((f) => f.path));
  return sources.filter((s): s is ManifestSource => typeof s === 'object' && s !== null && !known.has((s as ManifestSource).path));
}

/**
 * Writes `<feedsDir>/feeds.json` listing `present` catalog feeds (in catalog
 * order) and the kept operator entries; returns whether its content changed.
 */
export function writeFeedsManifest(feedsDir: string, present: CatalogFeed[], kept: ManifestSource[]): { path: string; changed: boolean } {
  const path = join(feedsDir, 'feeds.json');
  const sources = [...present.map(manifestEntryOf), ...kept];
  const text = `{\n  "sources": [\n${sources.map((s) => `    ${JSON.stringify(s)}`).join(',\n')}\n  ]\n}\n`;
  const before = existsSync(path) ? readFileSync(path, 'utf8') : null;
  if (before === text) return { path, changed: false };
  writeFileAtomic(path, text);
  return { path, changed: true };
}
