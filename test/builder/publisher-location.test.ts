/**
 * The publisher locates its own ranges: a network's RFC 8805 geofeed and a
 * cloud's published region outrank the third-party geolocation database, even
 * where the database's range is the more specific; among publishers the more
 * specific range wins; a region the table does not know, a global scope or a
 * geofeed no provider publishes leaves the database's answer.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { AWS_REGIONS } from '../../index-builder/cloud-regions/aws.ts';
import type { ResolvedSource } from '../../index-builder/manifest.ts';
import { IndexReader } from '../../src/index/reader.ts';

const dir = mkdtempSync(join(tmpdir(), 'publisher-location-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function written(name: string, text: string, options: Record<string, string>): ResolvedSource {
  const absPath = join(dir, name);
  writeFileSync(absPath, text);
  return { options: { path: absPath, ...options } as ResolvedSource['options'], absPath, displayPath: name };
}

// The third-party database: specific ranges, wrong for the publishers' space.
const DB = [
  '203.0.113.0,203.0.113.63,FR,Grand Est,,Nancy,54000,48.6921,6.1844,Europe/Paris',
  '198.51.100.0,198.51.100.127,US,Virginia,,Ashburn,20147,39.0438,-77.4874,America/New_York',
  '192.0.2.0,192.0.2.255,US,California,,Los Angeles,90001,34.05,-118.24,America/Los_Angeles',
  '100.64.0.0,100.64.0.255,DE,Hessen,,Frankfurt am Main,60311,50.11,8.68,Europe/Berlin',
  '100.65.0.0,100.65.0.255,DE,Hessen,,Frankfurt am Main,60311,50.11,8.68,Europe/Berlin',
  '100.66.0.0,100.66.0.255,NL,North Holland,,Amsterdam,1012,52.37,4.9,Europe/Amsterdam',
  '100.67.0.0,100.67.0.255,US,Virginia,,Ashburn,20147,39.0438,-77.4874,America/New_York',
  '100.67.1.0,100.67.1.255,US,New York,,New York,10001,40.71,-74.0,America/New_York',
  '100.68.0.0,100.68.0.255,IE,Leinster,,Dublin,,53.35,-6.26,Europe/Dublin',
];
const AWS = {
  syncToken: '1',
  createDate: '2026-11-20-00-00-00',
  prefixes: [
    { ip_prefix: '198.51.100.0/24', region: 'sa-east-1', service: 'EC2', network_border_group: 'sa-east-1' },
    { ip_prefix: '100.64.0.0/16', region: 'us-east-1', service: 'AMAZON', network_border_group: 'us-east-1' },
    { ip_prefix: '100.64.0.0/24', region: 'ap-northeast-1', service: 'EC2', network_border_group: 'ap-northeast-1' },
    { ip_prefix: '192.0.2.0/24', region: 'GLOBAL', service: 'CLOUDFRONT', network_border_group: 'GLOBAL' },
    { ip_prefix: '100.65.0.0/24', region: 'xx-unknown-9', service: 'EC2', network_border_group: 'xx-unknown-9' },
    { ip_prefix: '100.67.0.0/16', region: 'us-east-1', service: 'EC2', network_border_group: 'us-east-1' },
    { ip_prefix: '100.68.0.0/16', region: 'eu-west-1', service: 'EC2', network_border_group: 'eu-west-1' },
  ],
  ipv6_prefixes: [{ ipv6_prefix: '2001:db8:aa::/48', region: 'eu-west-1', service: 'EC2', network_border_group: 'eu-west-1' }],
};
const GEOFEED = ['203.0.113.0/24,FR,FR-IDF,Aubervilliers,93300'].join('\n') + '\n';
const UNNAMED_GEOFEED = ['100.66.0.0/16,BE,,Brussels,'].join('\n') + '\n';

let reader: IndexReader;
beforeAll(async () => {
  const out = join(dir, 'x.idx');
  await buildIndex({
    quiet: true,
    out,
    sources: [
      written('geo.csv', DB.join('\n') + '\n', { type: 'geo-csv' }),
      written('aws.json', JSON.stringify(AWS), { type: 'cloud-aws' }),
      written('geofeed.csv', GEOFEED, { type: 'geofeed', category: 'datacenter', provider: 'Vultr' }),
      written('aggregated.csv', UNNAMED_GEOFEED, { type: 'geofeed' }),
    ],
  });
  reader = IndexReader.open(out);
}, 60_000);

const geo = (ip: string) => reader.lookup(ip)?.record.geo ?? null;

describe('publisher location over the geolocation database', () => {
  test("a network's geofeed keeps its city where the database has a more specific range", () => {
    expect(geo('203.0.113.10')).toMatchObject({ countryCode: 'FR', city: 'Aubervilliers', region: 'Île-de-France', postalCode: '93300' });
    expect(geo('203.0.113.200')?.city).toBe('Aubervilliers');
  });

  test("a cloud's region places its range in the region's country and city, with the city's time zone", () => {
    expect(geo('198.51.100.5')).toMatchObject({ countryCode: 'BR', city: 'São Paulo', region: 'São Paulo', timezone: 'America/Sao_Paulo' });
    expect(geo('198.51.100.200')?.countryCode).toBe('BR');
    expect(geo('2001:db8:aa::1')?.countryCode).toBe('IE');
  });

  test("among the publisher's own ranges the more specific wins", () => {
    expect(geo('100.64.0.9')).toMatchObject({ countryCode: 'JP', city: 'Tokyo' });
    // us-east-1 names a state, no city: where the database disagrees (Frankfurt) the publisher's answer is whole, no city invented.
    expect(geo('100.64.1.9')).toMatchObject({ countryCode: 'US', region: 'Virginia', city: null, latitude: null });
  });

  test("a region naming no city keeps the database's finer answer where it lies inside the region, not elsewhere", () => {
    expect(geo('100.67.0.9')).toMatchObject({ countryCode: 'US', region: 'Virginia', city: 'Ashburn' });
    expect(geo('100.67.1.9')).toMatchObject({ countryCode: 'US', region: 'Virginia', city: null });
    expect(geo('100.67.2.9')).toMatchObject({ countryCode: 'US', region: 'Virginia', city: null });
    // eu-west-1 names only the country: Dublin lies inside it.
    expect(geo('100.68.0.9')).toMatchObject({ countryCode: 'IE', city: 'Dublin', timezone: 'Europe/Dublin' });
    expect(geo('100.68.1.9')).toMatchObject({ countryCode: 'IE', city: null });
  });

  test('a global scope or a region the table does not know leaves the database answer', () => {
    expect(AWS_REGIONS['xx-unknown-9']).toBeUndefined();
    expect(geo('192.0.2.7')).toMatchObject({ countryCode: 'US', city: 'Los Angeles' });
    expect(geo('100.65.0.7')).toMatchObject({ countryCode: 'DE', city: 'Frankfurt am Main' });
  });

  test('a geofeed no provider publishes is a third-party list: the more specific database range stands', () => {
    expect(geo('100.66.0.7')).toMatchObject({ countryCode: 'NL', city: 'Amsterdam' });
    expect(geo('100.66.9.7')).toMatchObject({ countryCode: 'BE', city: 'Brussels' });
  });
});
