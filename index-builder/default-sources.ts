/**
 * The embedded default: the data packages `bun install` brings, plus every
 * feed of IPINTEL_FEEDS_DIR/feeds.json when that folder has one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DATA_PACKAGE_FILES } from '../src/contract/data-packages.ts';
import { loadManifest, type ResolvedSource } from './manifest.ts';

/** Folder of an installed package (resolved like an import). */
function packageDir(name: string): string {
  return dirname(Bun.resolveSync(`${name}/package.json`, import.meta.dir));
}

/**
 * A `--manifest` build's sources: the data packages first (location and ASN
 * ranges), then the manifest. A manifest with its own location database
 * (geo-mmdb, geo-csv) leaves the default location out; one with asn-csv
 * ranges leaves the default ASN ranges out.
 */
export function withDataDefaults(manifest: ResolvedSource[], dataSources: () => ResolvedSource[] = packageSources): ResolvedSource[] {
  const types = new Set(manifest.map((s) => s.options.type));
  const replaced = (type: string) => (type.startsWith('geo-') ? types.has('geo-mmdb') || types.has('geo-csv') : types.has(type));
  return [...dataSources().filter((s) => !replaced(s.options.type)), ...manifest];
}

/**
 * The data date of an ip-location-db package, from its version (`2.3.YYYYMMDDHH`,
 * the day the data was published); undefined for any other form. Its CSV
 * files state no date and their mtime is only the day `bun install` ran.
 */
export function packageDataDate(version: string): string | undefined {
  const m = /^\d+\.\d+\.(\d{4})(\d{2})(\d{2})\d{2}$/.exec(version);
  return m ? `${m[1]}-${m[2]}-${m[3]}` : undefined;
}

/** Sources from the installed data packages (location and ASN ranges), dated by their package version. */
export function packageSources(): ResolvedSource[] {
  return DATA_PACKAGE_FILES.map(({ type, pkg, file }) => ({
    options: { type, path: file, ...dateOption(pkg) },
    absPath: join(packageDir(pkg), file),
    displayPath: `${pkg}/${file}`,
  }));
}

function dateOption(pkg: string): { date?: string } {
  const version: unknown = JSON.parse(readFileSync(join(packageDir(pkg), 'package.json'), 'utf8')).version;
  const date = typeof version === 'string' ? packageDataDate(version) : undefined;
  return date ? { date } : {};
}

/** `sources` plus every feed of `<feedsDir>/feeds.json` when that file exists. */
export function withFeedsDir(sources: ResolvedSource[], feedsDir: string): ResolvedSource[] {
  const manifest = join(feedsDir, 'feeds.json');
  return existsSync(manifest) ? [...sources, ...loadManifest(manifest)] : sources;
}

/** The default source list: the data packages (`dataSources`: the installed ones unless told) plus `<feedsDir>/feeds.json` when present. */
export function defaultSources(feedsDir: string, dataSources: () => ResolvedSource[] = packageSources): ResolvedSource[] {
  return withFeedsDir(dataSources(), feedsDir);
}

/** Licence credits for the sources a build used (shown in README and /v1/data/status). */
export function attributionsFor(sources: ResolvedSource[]): string[] {
  const out = new Set<string>();
  for (const s of sources) {
    if (s.absPath.includes('@ip-location-db/dbip-city')) out.add('IP Geolocation by DB-IP (https://db-ip.com), licensed CC BY 4.0');
    if (s.absPath.includes('@ip-location-db/asn'))
      out.add('ASN data from ip-location-db (RouteViews, NRO and DB-IP, https://db-ip.com), licensed CC BY 4.0');
  }
  out.add('IANA registries (address space, special-purpose addresses)');
  return [...out];
}
