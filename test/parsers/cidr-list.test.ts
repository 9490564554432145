import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { parse, stripComment } from '../../index-builder/parsers/cidr-list.ts';
import { runParser, skippedLines, tempFeed, valueAt } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

describe('cidr-list on real snapshots', () => {
  testWithShared('Cloudflare v4 (no final newline): 15 content ranges with the operator', async () => {
    const { rec, ctx } = await runParser(parse, 'cloud/cloudflare-ips-v4.txt', { category: 'content', provider: 'Cloudflare' });
    expect(ctx.rows).toBe(15);
    expect(ctx.skipped).toBe(0);
    expect(valueAt(rec, 'provider', '173.245.48.0/20')).toEqual({ category: 'content', provider: 'Cloudflare' });
    // Last line of the file has no newline and must still be read.
    expect(valueAt(rec, 'provider', '131.0.72.0/22')).toEqual({ category: 'content', provider: 'Cloudflare' });
  });

  testWithShared('Cloudflare v6: IPv6 values are bigints', async () => {
    const { rec, ctx } = await runParser(parse, 'cloud/cloudflare-ips-v6.txt', { category: 'content', provider: 'Cloudflare' });
    expect(ctx.rows).toBe(7);
    const [family, start, end] = rec.of('provider')[0];
    expect(family).toBe(6);
    expect(start).toBe(0x2400cb00n << 96n); // 2400:cb00::/32
    expect(end).toBe((0x2400cb00n << 96n) | ((1n << 96n) - 1n));
  });

  testWithShared('X4BNet datacenter list without provider: category only', async () => {
    const { rec, ctx } = await runParser(parse, 'cloud/x4bnet-datacenter-ipv4.txt', { category: 'datacenter' });
    expect(ctx.rows).toBe(42566);
    expect(ctx.skipped).toBe(0);
    expect(valueAt(rec, 'provider', '1.12.0.0/14')).toEqual({ category: 'datacenter' });
  });

  testWithShared('threat category goes to threatList; trailing spaces tolerated (derived DROPv6 CIDRs)', async () => {
    const { rec, ctx } = await runParser(parse, 'threat/derived-spamhaus-drop_v6-cidrs.txt', { category: 'threat' });
    expect(ctx.rows).toBe(51);
    expect(ctx.skipped).toBe(0);
    expect(rec.of('provider')).toHaveLength(0);
    expect(valueAt(rec, 'threatList', '2a12:2640::/29')).toEqual({ list: 'threat-list' });
  });

  testWithShared('FireHOL level1: comment header ignored, 2,892 entries, list named by provider', async () => {
    const { rec, ctx } = await runParser(parse, 'threat/firehol_level1.netset', { category: 'threat', provider: 'firehol-level1' });
    expect(ctx.rows).toBe(2892);
    expect(ctx.skipped).toBe(0);
    expect(valueAt(rec, 'threatList', '1.10.16.0/20')).toEqual({ list: 'firehol-level1' });
  });

  testWithShared('Mullvad host addresses are single-address ranges', async () => {
    const { rec } = await runParser(parse, 'vpn/x4bnet-input-mullvadvpn-ips.txt', { category: 'vpn', provider: 'Mullvad' });
    expect(valueAt(rec, 'provider', '23.144.160.67/32')).toEqual({ category: 'vpn', provider: 'Mullvad' });
  });
});

describe('cidr-list on malformed input', () => {
  test('comments (# and ;, inline too), bare addresses, bad lines skipped with their numbers', async () => {
    const path = tempFeed(
      'list.txt',
      ['# header', '10.0.0.0/8 # inline', '; other comment', '192.0.2.1', 'not-an-ip', '', '2001:db8::/32 ; x', '300.1.1.1/8', '10.1.2.3/33'].join('\n'),
    );
    const { rec, ctx } = await runParser(parse, path, { category: 'proxy' });
    expect(ctx.rows).toBe(3);
    expect(skippedLines(ctx)).toEqual([5, 8, 9]);
    expect(valueAt(rec, 'provider', '192.0.2.1/32')).toEqual({ category: 'proxy' });
    expect(valueAt(rec, 'provider', '2001:db8::/32')).toEqual({ category: 'proxy' });
  });

  test('host bits below the mask are cleared', async () => {
    const { rec } = await runParser(parse, tempFeed('l.txt', '10.1.2.3/8\n'), { category: 'vpn' });
    expect(valueAt(rec, 'provider', '10.0.0.0/8')).toEqual({ category: 'vpn' });
  });

  test('a file where nothing parses is a FeedError naming file and first bad line', async () => {
    const path = tempFeed('page.html', '# list\n<html>\n<body>oops</body>\n');
    const err = await runParser(parse, path, { category: 'vpn' }).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain(`${path}:2:`);
  });

  test('missing or unknown category fails clearly', async () => {
    const path = tempFeed('l.txt', '10.0.0.0/8\n');
    await expect(runParser(parse, path, {})).rejects.toThrow(/needs "category"/);
    await expect(runParser(parse, path, { category: 'hosting' })).rejects.toThrow(/unknown category "hosting"/);
  });

  test('stripComment removes whichever comment marker comes first', () => {
    expect(stripComment('  1.2.3.0/24 ; SBL1 # x ')).toBe('1.2.3.0/24');
    expect(stripComment('# only comment')).toBe('');
    expect(stripComment('2001:db8::/32   ')).toBe('2001:db8::/32');
  });
});
