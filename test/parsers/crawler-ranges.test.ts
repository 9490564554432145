import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { parse } from '../../index-builder/parsers/crawler-ranges.ts';
import { runParser, skippedLines, tempFeed, valueAt } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

describe('crawler-ranges on real snapshots', () => {
  testWithShared('googlebot.json: 169 v4 + 146 v6 prefixes under the crawler key', async () => {
    const { rec, ctx } = await runParser(parse, 'crawlers/googlebot.json', { crawler: 'googlebot' });
    expect(ctx.rows).toBe(315);
    expect(ctx.skipped).toBe(0);
    const calls = rec.of('crawler');
    expect(calls.filter((c) => c[0] === 4)).toHaveLength(169);
    expect(calls.filter((c) => c[0] === 6)).toHaveLength(146);
    expect(valueAt(rec, 'crawler', '2001:4860:4801:10::/64')).toBe('googlebot');
  });

  testWithShared('Ahrefs file without creationTime', async () => {
    const { rec, ctx } = await runParser(parse, 'crawlers/ahrefs-crawler-ip-ranges.json', { crawler: 'ahrefsbot' });
    expect(ctx.rows).toBe(51);
    expect(valueAt(rec, 'crawler', '5.39.1.224/27')).toBe('ahrefsbot');
  });

  testWithShared('bingbot.json', async () => {
    const { rec, ctx } = await runParser(parse, 'crawlers/bingbot.json', { crawler: 'bingbot' });
    expect(ctx.rows).toBe(28);
    expect(valueAt(rec, 'crawler', '157.55.39.0/24')).toBe('bingbot');
  });
});

describe('crawler-ranges input checks', () => {
  test('one CIDR a line is accepted; bad lines skipped by number', async () => {
    const path = tempFeed('bot.txt', '# my bot\n66.249.64.0/27\nnope\n2001:4860:4801:10::/64\n');
    const { rec, ctx } = await runParser(parse, path, { crawler: 'my-bot' });
    expect(ctx.rows).toBe(2);
    expect(skippedLines(ctx)).toEqual([3]);
    expect(valueAt(rec, 'crawler', '66.249.64.0/27')).toBe('my-bot');
  });

  test('JSON entries without a prefix, or with the wrong family, are skipped', async () => {
    const doc = { prefixes: [{ ipv4Prefix: '66.249.64.0/27' }, { ipv4Prefix: '2001:db8::/32' }, { other: 1 }] };
    const { ctx } = await runParser(parse, tempFeed('b.json', JSON.stringify(doc)), { crawler: 'x' });
    expect(ctx.rows).toBe(1);
    expect(ctx.skipSamples.map((s) => s.reason)).toEqual([
      'prefixes[1]: not an IPv4 CIDR: "2001:db8::/32"',
      'prefixes[2]: no ipv4Prefix or ipv6Prefix string',
    ]);
  });

  test('JSON without a prefixes array, and bad crawler keys, are FeedErrors', async () => {
    const path = tempFeed('b.json', '{"creationTime":"x"}');
    const err = await runParser(parse, path, { crawler: 'x' }).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain(path);
    expect(err.message).toContain('"prefixes"');
    const ok = tempFeed('b.txt', '10.0.0.0/8\n');
    await expect(runParser(parse, ok, {})).rejects.toThrow(/needs "crawler"/);
    await expect(runParser(parse, ok, { crawler: 'Google Bot' })).rejects.toThrow(/must match/);
  });
});
