import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { parse } from '../../index-builder/parsers/geofeed.ts';
import { FeedError } from '../../index-builder/feed/source.ts';
import { parseCidr, parseIPv4 } from '../../src/net/ip.ts';
import { RecordingSink, sourceFor } from '../helpers/recording-sink.ts';
import { tempFeed } from './temp-feed.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

async function run(path: string, options: Record<string, string> = {}) {
  const rec = new RecordingSink();
  const ctx = sourceFor(path, { type: 'geofeed', ...options });
  await parse(ctx, rec.sink);
  return { ctx, geo: rec.of('geo'), provider: rec.of('provider') };
}

describe('geofeed on real RFC 8805 feeds', () => {
  testWithShared('DigitalOcean: locations with readable regions, and the manifest category/provider', async () => {
    const { ctx, geo, provider } = await run('cloud/digitalocean-geofeed.csv', { category: 'datacenter', provider: 'DigitalOcean' });
    expect(ctx.rows).toBe(1182);
    expect(ctx.skipped).toBe(0);
    expect(geo.length).toBe(1182);
    expect(provider.length).toBe(1182);
    const ams = parseCidr('5.101.96.0/21')!;
    const i = geo.findIndex((c) => c[1] === ams.start);
    expect(geo[i]).toEqual([4, ams.start, ams.end, { countryCode: 'NL', region: 'Noord-Holland', city: 'Amsterdam', postalCode: '1098 XH' }]);
    expect(provider[i]).toEqual([4, ams.start, ams.end, { category: 'datacenter', provider: 'DigitalOcean', region: 'NL-NH' }]);
    const nj = geo.find((c) => c[1] === parseIPv4('24.144.64.0'))!;
    expect(nj[3]).toEqual({ countryCode: 'US', region: 'New Jersey', city: 'North Bergen', postalCode: '07047' });
  });

  testWithShared('Linode: # header comments are not skips; empty postal is left out; no category means no provider calls', async () => {
    const { ctx, geo, provider } = await run('cloud/linode-geofeed.csv');
    expect(ctx.rows).toBe(4552);
    expect(ctx.skipped).toBe(0);
    expect(provider.length).toBe(0);
    const p = parseCidr('2600:3c00::/32')!;
    expect(geo[0]).toEqual([6, p.start, p.end, { countryCode: 'US', region: 'Texas', city: 'Richardson' }]);
    expect(geo.at(-1)![3]).toEqual({ countryCode: 'FR', region: 'Île-de-France', city: 'Paris' });
  });
});

describe('geofeed on bad input', () => {
  test('malformed lines are skipped with their line numbers; unknown region codes kept as published', async () => {
    const path = tempFeed('bad-geofeed.csv', [
      '# prefix,country,region,city,postal',
      '192.0.2.0/24,US,US-CA,San Jose,95134',
      '192.0.2.0/33,US,US-CA,San Jose,',
      'not-a-prefix,US,,,',
      '198.51.100.0/24,USA,,,',
      '203.0.113.0/24,SG,SG-SIN,Singapore,',
      '2001:db8::/32,,,,',
    ]);
    const { ctx, geo, provider } = await run(path, { category: 'vpn' });
    expect(ctx.rows).toBe(3);
    expect(geo[1][3]).toEqual({ countryCode: 'SG', region: 'SG-SIN', city: 'Singapore' });
    // The row without any location reports only its category.
    expect(geo.length).toBe(2);
    expect(provider.length).toBe(3);
    expect(provider[2][3]).toEqual({ category: 'vpn' });
    expect(ctx.skipSamples).toEqual([
      { line: 3, reason: 'bad prefix "192.0.2.0/33"' },
      { line: 4, reason: 'bad prefix "not-a-prefix"' },
      { line: 5, reason: 'bad country code "USA"' },
    ]);
  });

  test('an unknown category in the manifest fails naming the file', async () => {
    const path = tempFeed('cat.csv', ['192.0.2.0/24,US,,,']);
    const err = await run(path, { category: 'cloud' }).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain(`${path}: unknown category "cloud"`);
  });

  test('a file that is not a geofeed fails naming file and line', async () => {
    const path = tempFeed('json.csv', ['{', ...Array.from({ length: 12 }, () => '  "prefixes": [],'), '}']);
    const err = await run(path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toBe(`${path}:10: not an RFC 8805 geofeed: no line parses`);
  });
});
