/**
 * A small stand-in for the default data packages, laid out as they are in
 * node_modules (@ip-location-db/<package>/<file>): two tiny MMDB files in the
 * ip-location-db city schema and the first rows of the real ASN CSVs.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DATA_PACKAGE_FILES } from '../../src/feeds/default-data.ts';
import { Float, writeMmdb } from '../parsers/mmdb-writer.ts';

const NODE_MODULES = resolve(import.meta.dir, '../../node_modules');

/** A city record in the ip-location-db schema. */
function city(cc: string, name: string, lat: number, lon: number) {
  return { city: name, country_code: cc, state1: '', state2: '', postcode: '', latitude: new Float(lat), longitude: new Float(lon), timezone: '' };
}

/** The first `n` lines of a real file of the installed packages. */
function headOf(path: string, n: number): string {
  return readFileSync(path, 'utf8').split('\n').slice(0, n).join('\n') + '\n';
}

/** Writes the small data set under `dir` (a folder playing node_modules); returns `dir`. */
export function writeSmallDefaultData(dir: string): string {
  const contents: Record<string, Uint8Array | string> = {
    'dbip-city-ipv4.mmdb': writeMmdb({ ipVersion: 4, networks: [['8.8.8.0/24', city('US', 'Mountain View', 37.386, -122.0838)]] }),
    'dbip-city-ipv6.mmdb': writeMmdb({ ipVersion: 6, networks: [['2001:4860::/32', city('US', 'Mountain View', 37.386, -122.0838)]] }),
    'asn-ipv4.csv': headOf(join(NODE_MODULES, '@ip-location-db/asn/asn-ipv4.csv'), 500),
    'asn-ipv6.csv': headOf(join(NODE_MODULES, '@ip-location-db/asn/asn-ipv6.csv'), 500),
  };
  for (const { pkg, file } of DATA_PACKAGE_FILES) {
    const path = join(dir, pkg, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, contents[file]);
  }
  return dir;
}
