/**
 * The feed catalog (feeds/catalog.json): every public feed the updater
 * downloads, with its manifest type and options, its local path under the
 * feeds folder, its publisher URL and licence, and its validation limits.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, normalize, resolve } from 'node:path';
import { parseDuration } from '../duration.ts';
import { isKnownType, type ManifestSource } from '../../index-builder/index.ts';
// Imported (not read at run time) so the compiled binary carries the catalog.
import bundledCatalog from '../../feeds/catalog.json' with { type: 'json' };

/** Largest fraction of the previous copy's rows a new copy may lose, unless an entry says otherwise. */
const DEFAULT_MAX_SHRINK = 0.5;

/** One downloadable feed. */
export interface CatalogFeed {
  type: string;
  /** Extra manifest keys (`category`, `provider`, `crawler`, `format`). */
  options: Record<string, string>;
  /** Path under the feeds folder; also the path under a mirror. */
  path: string;
  url: string;
  publisher: string;
  licence: string;
  /** A copy with fewer parsed rows is refused. */
  minRows: number;
  /** A copy that lost more than this fraction of the previous copy's rows is refused. */
  maxShrink: number;
  /** How often the server's refresher checks this feed (`cadence`, e.g. `1h`); null: the refresh interval. */
  cadenceMs: number | null;
  /** Most megabytes of a copy (downloaded and inflated); absent: its type's bound (src/feeds/bounds.ts). */
  maxMb?: number;
  /** Hosts besides the URL's own that a redirect may lead to (https only, public addresses only). */
  allowHosts?: string[];
}

/** A catalog problem, naming the file and the entry. */
export class CatalogError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogError';
  }
}

/** The manifest entry (`feeds.json`) of a catalog feed. */
export function manifestEntryOf(feed: CatalogFeed): ManifestSource {
  return { type: feed.type, ...feed.options, path: feed.path };
}

/** Loads a catalog file, or the one shipped with ipintel when `path` is omitted. */
export function loadCatalog(path?: string): CatalogFeed[] {
  const where = path ?? 'feeds/catalog.json (bundled)';
  let doc: unknown = bundledCatalog;
  if (path) {
    try {
      doc = JSON.parse(readFileSync(path, 'utf8'));
    } catch (e) {
      throw new CatalogError(`${path}: ${(e as Error).message}`);
    }
  }
  const feeds = (doc as { feeds?: unknown })?.feeds;
  if (!Array.isArray(feeds)) throw new CatalogError(`${where}: expected {"feeds": [...]}`);
  const parsed = feeds.map((f, i) => checkFeed(f, `${where}: feeds[${i}]`));
  const seen = new Set<string>();
  parsed.forEach((f, i) => {
    if (seen.has(f.path)) throw new CatalogError(`${where}: feeds[${i}]: path ${f.path} appears twice`);
    seen.add(f.path);
  });
  return parsed;
}

/** Validates one catalog entry. */
function checkFeed(raw: unknown, at: string): CatalogFeed {
  if (typeof raw !== 'object' || raw === null) throw new CatalogError(`${at}: not an object`);
  const f = raw as Record<string, unknown>;
  const str = (key: string): string => {
    const v = f[key];
    if (typeof v !== 'string' || v.trim() === '') throw new CatalogError(`${at}: missing "${key}"`);
    return v;
  };
  const type = str('type');
  if (!isKnownType(type)) throw new CatalogError(`${at}: unknown type ${JSON.stringify(type)}`);
  const path = str('path');
  // The path is joined to the feeds folder and to a mirror URL: keep it inside both.
  if (isAbsolute(path) || normalize(path).startsWith('..') || path.includes('\\')) {
    throw new CatalogError(`${at}: path must be relative and stay inside the feeds folder (got ${path})`);
  }
  if (path === 'feeds.json') throw new CatalogError(`${at}: path feeds.json is the manifest the updater writes`);
  const url = str('url');
  if (!/^https?:\/\//.test(url)) throw new CatalogError(`${at}: url must be http(s) (got ${url})`);
  const options = f.options ?? {};
  if (typeof options !== 'object' || options === null || Object.values(options).some((v) => typeof v !== 'string')) {
    throw new CatalogError(`${at}: "options" must map names to strings`);
  }
  const minRows = f.minRows ?? 1;
  if (typeof minRows !== 'number' || !Number.isInteger(minRows) || minRows < 1) throw new CatalogError(`${at}: minRows must be an integer >= 1`);
  const maxShrink = f.maxShrink ?? DEFAULT_MAX_SHRINK;
  if (typeof maxShrink !== 'number' || maxShrink < 0 || maxShrink > 1) throw new CatalogError(`${at}: maxShrink must be between 0 and 1`);
  let cadenceMs: number | null = null;
  if (f.cadence !== undefined) {
    if (typeof f.cadence !== 'string') throw new CatalogError(`${at}: cadence must be a duration like 1h, 24h or 7d`);
    try {
      cadenceMs = parseDuration('cadence', f.cadence);
    } catch (e) {
      throw new CatalogError(`${at}: ${(e as Error).message}`);
    }
  }
  const feed: CatalogFeed = { type, options: options as Record<string, string>, path, url, publisher: str('publisher'), licence: str('licence'), minRows, maxShrink, cadenceMs };
  if (f.maxMb !== undefined) {
    if (typeof f.maxMb !== 'number' || !(f.maxMb > 0)) throw new CatalogError(`${at}: maxMb must be a positive number`);
    feed.maxMb = f.maxMb;
  }
  if (f.allowHosts !== undefined) {
    const hosts = f.allowHosts;
    if (!Array.isArray(hosts) || hosts.some((h) => typeof h !== 'string' || !/^[a-z0-9.-]+$/i.test(h))) throw new CatalogError(`${at}: allowHosts must be a list of host names`);
    feed.allowHosts = hosts as string[];
  }
  return feed;
}

/** Absolute path of a feed's local copy. */
export function localPathOf(feedsDir: string, feed: CatalogFeed): string {
  return resolve(feedsDir, feed.path);
}

/** Where a feed is fetched from: its publisher, or `<mirror>/<path>` when a mirror is given. */
export function sourceUrlOf(feed: CatalogFeed, mirror: string | null): string {
  if (!mirror) return feed.url;
  return new URL(feed.path, mirror.endsWith('/') ? mirror : `${mirror}/`).toString();
}

/** The catalog feeds an operator's manifest names (same file under the manifest's folder). */
export function manifestFeeds(catalog: CatalogFeed[], manifestDir: string, manifestFiles: string[]): CatalogFeed[] {
  const named = new Set(manifestFiles.map((p) => resolve(p)));
  return catalog.filter((f) => named.has(localPathOf(manifestDir, f)));
}
