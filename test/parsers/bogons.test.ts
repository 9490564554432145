import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { parse } from '../../index-builder/parsers/bogons.ts';
import { runParser, skippedLines, tempFeed, valuesAt } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

describe('bogons', () => {
  testWithShared('Team Cymru fullbogons IPv4: 703 prefixes, header comments ignored', async () => {
    const { rec, ctx } = await runParser(parse, 'bogons/fullbogons-ipv4.txt');
    expect(ctx.rows).toBe(703);
    expect(ctx.skipped).toBe(0);
    expect(valuesAt(rec, 'bogon', '0.0.0.0/8')).toHaveLength(1);
    expect(valuesAt(rec, 'bogon', '10.0.0.0/8')).toHaveLength(1);
    expect(valuesAt(rec, 'bogon', '8.8.8.0/24')).toHaveLength(0);
  });

  testWithShared('Team Cymru fullbogons IPv6 (2.3 MB): 143,544 prefixes', async () => {
    const { rec, ctx } = await runParser(parse, 'bogons/fullbogons-ipv6.txt');
    expect(ctx.rows).toBe(143544);
    expect(ctx.skipped).toBe(0);
    // Every claim carries the list's date (`# last updated 1710089701`): newer registry data outranks it.
    expect(rec.of('bogon')[0]).toEqual([6, 0n, (1n << 118n) - 1n, '2024-03-10T16:55:01.000Z']); // ::/10
    expect(ctx.date).toEqual({ at: '2024-03-10T16:55:01.000Z', from: 'file' });
  });

  test('bad lines are skipped by number; an empty list is a FeedError', async () => {
    const { ctx } = await runParser(parse, tempFeed('b.txt', '# last updated 1\n0.0.0.0/8\nbogus\n240.0.0.0/4\n'));
    expect(ctx.rows).toBe(2);
    expect(skippedLines(ctx)).toEqual([3]);
    const path = tempFeed('empty.txt', '# last updated 1\n');
    const err = await runParser(parse, path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain(path);
  });
});
