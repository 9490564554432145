import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { parse, readAws } from '../../index-builder/parsers/cloud-aws.ts';
import { runParser, tempFeed, valueAt } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

describe('cloud-aws', () => {
  testWithShared('real ip-ranges.json: one value per distinct prefix (7,899 v4 + 3,106 v6)', async () => {
    const { rec, ctx } = await runParser(parse, 'cloud/aws-ip-ranges.json');
    expect(ctx.skipped).toBe(0);
    expect(ctx.rows).toBe(7899 + 3106);
    expect(rec.of('provider').filter((c) => c[0] === 6)).toHaveLength(3106);
    // Listed only as AMAZON.
    expect(valueAt(rec, 'provider', '3.4.12.4/32')).toEqual({
      category: 'datacenter', provider: 'Amazon Web Services', service: 'AMAZON', region: 'eu-west-1',
    });
    // Listed as AMAZON, S3 and EC2: the narrower S3 wins.
    expect(valueAt(rec, 'provider', '3.5.140.0/22')).toEqual({
      category: 'datacenter', provider: 'Amazon Web Services', service: 'S3', region: 'ap-northeast-2',
    });
    // AMAZON + CLOUDFRONT: content.
    expect(valueAt(rec, 'provider', '120.52.22.96/27')).toEqual({
      category: 'content', provider: 'Amazon Web Services', service: 'CLOUDFRONT', region: 'GLOBAL',
    });
    expect(valueAt(rec, 'provider', '2406:daba:f000::/40')).toEqual({
      category: 'datacenter', provider: 'Amazon Web Services', service: 'EC2', region: 'ap-southeast-4',
    });
  });

  test('service preference does not depend on order in the file', () => {
    const rows = [
      { ip_prefix: '192.0.2.0/24', service: 'S3', region: 'r' },
      { ip_prefix: '192.0.2.0/24', service: 'EC2', region: 'r' },
      { ip_prefix: '192.0.2.0/24', service: 'AMAZON', region: 'r' },
    ];
    for (const prefixes of [rows, [...rows].reverse()]) {
      const entries = readAws({ prefixes, ipv6_prefixes: [] });
      expect(entries).toHaveLength(1);
      expect(entries[0].service).toBe('S3');
    }
    const generic = readAws({ prefixes: [rows[2], rows[1]], ipv6_prefixes: [] });
    expect(generic.map((e) => e.service)).toEqual(['EC2']);
  });

  test('a bad prefix is skipped; a document without the lists is a FeedError', async () => {
    const doc = { prefixes: [{ ip_prefix: '3.0.0.0/99', service: 'EC2' }, { ip_prefix: '3.5.0.0/16', service: 'EC2' }], ipv6_prefixes: [] };
    const { ctx } = await runParser(parse, tempFeed('aws.json', JSON.stringify(doc)));
    expect(ctx.rows).toBe(1);
    expect(ctx.skipSamples[0].reason).toBe('prefixes[0].ip_prefix: not a CIDR: "3.0.0.0/99"');
    const path = tempFeed('aws.json', '{"syncToken":"1"}');
    const err = await runParser(parse, path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain(`${path}: expected the AWS document to be an object with a "prefixes" array`);
  });

  test('invalid JSON is a FeedError naming the file', async () => {
    const path = tempFeed('aws.json', '{"prefixes": [');
    await expect(runParser(parse, path)).rejects.toThrow(/invalid JSON/);
  });
});
