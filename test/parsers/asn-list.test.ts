import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { parse, parseAsn } from '../../index-builder/parsers/asn-list.ts';
import { runParser, skippedLines, tempFeed } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

/** asnCategory calls keyed by ASN. */
function byAsn(calls: unknown[][]): Map<number, unknown[]> {
  return new Map(calls.map((c) => [c[0] as number, c.slice(1)]));
}

describe('asn-list on real snapshots', () => {
  testWithShared('X4BNet datacenter ASNs: inline comments (with commas) become labels; duplicates once', async () => {
    const { rec, ctx } = await runParser(parse, 'asn/x4bnet-datacenter-ASN.txt', { category: 'datacenter' });
    expect(ctx.skipped).toBe(0);
    expect(ctx.rows).toBe(892); // 906 lines, 892 distinct ASNs
    const asns = byAsn(rec.of('asnCategory'));
    expect(asns.get(45090)).toEqual(['datacenter', 'Tencent cloud computing, they dont really monitor their network']);
    expect(asns.get(3223)).toEqual(['datacenter', 'VOXILITY, RO']);
    // AS8560 is listed twice; the first label wins.
    expect(asns.get(8560)).toEqual(['datacenter', 'ONEANDONE-AS / IONOS, DE']);
    expect(asns.get(6698)).toEqual(['datacenter', 'VIRTUALSYSTEMS, UA']); // tab before '#'
  });

  testWithShared('X4BNet VPN ASNs', async () => {
    const { rec, ctx } = await runParser(parse, 'asn/x4bnet-vpn-ASN.txt', { category: 'vpn' });
    expect(ctx.rows).toBe(15);
    expect(byAsn(rec.of('asnCategory')).get(209854)).toEqual(['vpn', 'Surfshark']);
  });

  testWithShared('bad-asn-list.csv: header, quoted fields, space before the quote', async () => {
    const { rec, ctx } = await runParser(parse, 'asn/bad-asn-list.csv', { category: 'datacenter' });
    expect(ctx.skipped).toBe(0);
    expect(ctx.rows).toBe(723); // 742 rows, 723 distinct ASNs
    const asns = byAsn(rec.of('asnCategory'));
    expect(asns.get(51447)).toEqual(['datacenter', 'RootLayer Web Services Ltd, NL']);
    expect(asns.get(20248)).toEqual(['datacenter', 'Take 2 Hosting, Inc.']); // "20248","…" quoted ASN
    expect(asns.get(20264)).toEqual(['datacenter', 'WEBAIR-INTERNET-2 - Webair Internet Development Company Inc.']);
  });
});

describe('asn-list input checks', () => {
  test('bad lines skipped by number', async () => {
    const path = tempFeed('asns.txt', '# list\nAS13335 # Cloudflare\nASX\n\nas64512\n99999999999\n0\n123 # bare\n');
    const { rec, ctx } = await runParser(parse, path, { category: 'proxy' });
    expect(rec.of('asnCategory')).toEqual([
      [13335, 'proxy', 'Cloudflare'],
      [64512, 'proxy', undefined],
      [123, 'proxy', 'bare'],
    ]);
    expect(skippedLines(ctx)).toEqual([3, 6, 7]);
  });

  test('unterminated quote in CSV is skipped', async () => {
    const { ctx } = await runParser(parse, tempFeed('a.csv', 'ASN,Entity\n1,"open\n2,"ok"\n'), { category: 'vpn' });
    expect(ctx.rows).toBe(1);
    expect(ctx.skipSamples).toEqual([{ line: 2, reason: 'unterminated quote' }]);
  });

  test('a file with no ASNs is a FeedError with the first bad line', async () => {
    const path = tempFeed('x.txt', '{"asns": [1, 2]}\n');
    const err = await runParser(parse, path, { category: 'vpn' }).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain(`${path}:1:`);
  });

  test('parseAsn', () => {
    expect(parseAsn('AS4294967295')).toBe(4294967295);
    expect(parseAsn('AS4294967296')).toBeNull();
    expect(parseAsn('as15169')).toBe(15169);
    expect(parseAsn('AS-1')).toBeNull();
  });
});
