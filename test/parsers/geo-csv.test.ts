import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { parse } from '../../index-builder/parsers/geo-csv.ts';
import { FeedError } from '../../index-builder/feed/source.ts';
import { parseIPv4, parseIPv6 } from '../../src/net/ip.ts';
import { RecordingSink, sourceFor } from '../helpers/recording-sink.ts';
import { tempFeed } from './temp-feed.ts';

// No ip-location-db city CSV snapshot exists in shared/feeds: these fixtures
// follow the documented layout (README of ip-location-db:
// start,end,country_code,state1,state2,city,postcode,latitude,longitude,timezone),
// with rows modelled on dbip-city values read from the real MMDB.
async function run(path: string) {
  const rec = new RecordingSink();
  const ctx = sourceFor(path, { type: 'geo-csv' });
  await parse(ctx, rec.sink);
  return { ctx, geo: rec.of('geo') };
}

describe('geo-csv', () => {
  test('text addresses: values mapped, empty fields left out, timezone filled from coordinates', async () => {
    const path = tempFeed('dbip-city-ipv4.csv', [
      '1.0.0.0,1.0.0.255,AU,Queensland,,South Brisbane,,-27.4767,153.017,',
      '8.8.8.0,8.8.8.255,US,California,,Mountain View,94043,37.422,-122.085,America/Los_Angeles',
      '2001:4860::,2001:4860:ffff:ffff:ffff:ffff:ffff:ffff,CA,Quebec,,"Montreal, QC",,45.5019,-73.5674,',
      '9.9.9.0,9.9.9.255,CH,,,,,,,',
    ]);
    const { ctx, geo } = await run(path);
    expect(ctx.rows).toBe(4);
    expect(geo[0]).toEqual([4, parseIPv4('1.0.0.0'), parseIPv4('1.0.0.255'), {
      countryCode: 'AU', region: 'Queensland', city: 'South Brisbane', latitude: -27.4767, longitude: 153.017, timezone: 'Australia/Brisbane',
    }]);
    expect(geo[1][3]).toEqual({ countryCode: 'US', region: 'California', city: 'Mountain View', postalCode: '94043', latitude: 37.422, longitude: -122.085, timezone: 'America/Los_Angeles' });
    expect(geo[2]).toEqual([6, parseIPv6('2001:4860::'), parseIPv6('2001:4860:ffff:ffff:ffff:ffff:ffff:ffff'), {
      countryCode: 'CA', region: 'Quebec', city: 'Montreal, QC', latitude: 45.5019, longitude: -73.5674, timezone: 'America/Toronto',
    }]);
    expect(geo[3][3]).toEqual({ countryCode: 'CH' });
  });

  test('-num variants: integer addresses; the file name tells IPv6 apart', async () => {
    const v4 = await run(tempFeed('dbip-city-ipv4-num.csv', ['16777216,16777471,AU,Queensland,,South Brisbane,,-27.4767,153.017,']));
    expect(v4.geo[0].slice(0, 3)).toEqual([4, 16777216, 16777471]);
    const v6 = await run(tempFeed('dbip-city-ipv6-num.csv', ['1,1,US,,,,,,,', '42541956101370907050197289607612071936,42541956101372115976016904236786778111,US,,,,,,,']));
    expect(v6.geo.map((c) => c.slice(0, 3))).toEqual([[6, 1n, 1n], [6, parseIPv6('2001:4860::'), parseIPv6('2001:4860:0:ffff:ffff:ffff:ffff:ffff')]]);
  });

  test('a header row is not a skip; malformed rows are skipped with line numbers', async () => {
    const path = tempFeed('city.csv', [
      'ip_range_start,ip_range_end,country_code,state1,state2,city,postcode,latitude,longitude,timezone',
      '1.0.0.0,1.0.0.255,AU,Queensland,,South Brisbane,,-27.4767,153.017,',
      '1.0.1.0,1.0.1.255,AU,Queensland,,South Brisbane,,-127.4767,153.017,',
      '1.0.2.0,1.0.2.255,AUS,,,,,,,',
      '1.0.3.0,1.0.3.255,AU',
      '1.0.4.255,1.0.4.0,AU,,,,,,,',
    ]);
    const { ctx } = await run(path);
    expect(ctx.rows).toBe(1);
    expect(ctx.skipSamples.map((s) => s.line)).toEqual([3, 4, 5, 6]);
    expect(ctx.skipSamples.map((s) => s.reason)).toEqual([
      'bad coordinates "-127.4767,153.017"',
      'bad country code "AUS"',
      'expected 10 columns',
      'start address after end address',
    ]);
  });

  test('a file of another format fails naming file and line', async () => {
    const path = tempFeed('other.csv', Array.from({ length: 11 }, (_, i) => `10.0.0.${i}/32`));
    const err = await run(path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toBe(`${path}:10: not an ip-location-db city CSV: no line parses`);
  });
});

test('geo-csv: a row without any location is not reported', async () => {
  const rec = new RecordingSink();
  const ctx = sourceFor(tempFeed('empty-row.csv', ['1.0.0.0,1.0.0.255,,,,,,,,', '1.0.1.0,1.0.1.255,JP,,,,,,,']), { type: 'geo-csv' });
  await parse(ctx, rec.sink);
  expect(rec.of('geo')).toEqual([[4, parseIPv4('1.0.1.0'), parseIPv4('1.0.1.255'), { countryCode: 'JP' }]]);
  expect(ctx.skipped).toBe(0);
});
