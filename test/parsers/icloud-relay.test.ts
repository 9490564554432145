import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { parse } from '../../index-builder/parsers/icloud-relay.ts';
import { runParser, skippedLines, tempFeed, valueAt, valuesAt } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

// No snapshot of Apple's egress-ip-ranges.csv exists here (too large for the
// mirrors). This fixture follows Apple's documented RFC 8805 layout
// `prefix,country,region,city,` (empty postal code, no header).
const APPLE_FORMAT_FIXTURE = [
  '172.224.224.0/31,US,US-CA,Los Angeles,',
  '2a02:26f7:b3c0:4000::/64,DE,DE-BE,Berlin,',
  '104.28.0.20/31,GB,,,',
  'bad-prefix,US,US-NY,New York,',
  '172.225.46.64/26,US,US-NY,New York,',
].join('\n');

describe('icloud-relay', () => {
  test('Apple RFC 8805 layout: relay range with region, plus location', async () => {
    const { rec, ctx } = await runParser(parse, tempFeed('egress-ip-ranges.csv', APPLE_FORMAT_FIXTURE));
    expect(ctx.rows).toBe(4);
    expect(skippedLines(ctx)).toEqual([4]);
    expect(valueAt(rec, 'provider', '172.224.224.0/31')).toEqual({ category: 'privacy_relay', provider: 'iCloud Private Relay', region: 'US-CA' });
    expect(valueAt(rec, 'geo', '172.224.224.0/31')).toEqual({ countryCode: 'US', region: 'US-CA', city: 'Los Angeles' });
    expect(valueAt(rec, 'geo', '2a02:26f7:b3c0:4000::/64')).toEqual({ countryCode: 'DE', region: 'DE-BE', city: 'Berlin' });
    // Country only: no region on the provider value.
    expect(valueAt(rec, 'provider', '104.28.0.20/31')).toEqual({ category: 'privacy_relay', provider: 'iCloud Private Relay' });
    expect(valueAt(rec, 'geo', '104.28.0.20/31')).toEqual({ countryCode: 'GB' });
  });

  testWithShared('plain CIDR list (derived snapshot): ranges without location', async () => {
    const { rec, ctx } = await runParser(parse, 'relay/derived-x4bnet-apple-private-relay-ips.txt');
    expect(ctx.rows).toBe(3290);
    expect(ctx.skipped).toBe(0);
    expect(rec.of('geo')).toHaveLength(0);
    expect(valueAt(rec, 'provider', '104.28.28.0/26')).toEqual({ category: 'privacy_relay', provider: 'iCloud Private Relay' });
    expect(valueAt(rec, 'provider', '172.226.226.36/31')).toEqual({ category: 'privacy_relay', provider: 'iCloud Private Relay' }); // last line
    expect(valuesAt(rec, 'provider', '8.8.8.0/24')).toHaveLength(0);
  });

  test('a file with nothing usable is a FeedError', async () => {
    const path = tempFeed('egress.csv', 'ip_prefix,alpha2code,region,city,postal_code\n');
    const err = await runParser(parse, path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain(`${path}:1:`);
  });
});
