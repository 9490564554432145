import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { parse } from '../../index-builder/parsers/spamhaus-drop.ts';
import { runParser, skippedLines, tempFeed, valueAt } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

describe('spamhaus-drop on real snapshots', () => {
  testWithShared('drop_v4.json (JSON lines + metadata trailer): 1,670 records', async () => {
    const { rec, ctx } = await runParser(parse, 'threat/spamhaus-drop_v4.json');
    expect(ctx.rows).toBe(1670); // = metadata "records"
    expect(ctx.skipped).toBe(0);
    expect(valueAt(rec, 'threatList', '1.10.16.0/20')).toEqual({ list: 'drop', reference: 'SBL256894' });
    expect(valueAt(rec, 'threatList', '223.254.0.0/16')).toEqual({ list: 'drop', reference: 'SBL212803' });
  });

  testWithShared('drop.txt: `;` header and EOF comment, 1,385 entries', async () => {
    const { rec, ctx } = await runParser(parse, 'threat/spamhaus-drop.txt');
    expect(ctx.rows).toBe(1385);
    expect(ctx.skipped).toBe(0);
    expect(valueAt(rec, 'threatList', '1.19.0.0/16')).toEqual({ list: 'drop', reference: 'SBL434604' });
  });

  testWithShared('dropv6.txt: IPv6 entries are list dropv6', async () => {
    const { rec, ctx } = await runParser(parse, 'threat/spamhaus-dropv6.txt');
    expect(ctx.rows).toBe(78);
    expect(valueAt(rec, 'threatList', '2001:678:6c4::/48')).toEqual({ list: 'dropv6', reference: 'SBL626637' });
  });

  testWithShared('edrop.txt: list edrop', async () => {
    const { rec, ctx } = await runParser(parse, 'threat/spamhaus-edrop.txt');
    expect(ctx.rows).toBe(289);
    expect(valueAt(rec, 'threatList', '2.56.247.0/24')).toEqual({ list: 'edrop', reference: 'SBL620754' });
  });
});

describe('spamhaus-drop input checks', () => {
  test('EDROP from the file name when there is no header; missing SBL id leaves no reference', async () => {
    const { rec } = await runParser(parse, tempFeed('edrop.txt', '192.0.2.0/24 ; SBL1\n198.51.100.0/24\n'));
    expect(valueAt(rec, 'threatList', '192.0.2.0/24')).toEqual({ list: 'edrop', reference: 'SBL1' });
    expect(valueAt(rec, 'threatList', '198.51.100.0/24')).toEqual({ list: 'edrop' });
  });

  test('EDROP from the header alone', async () => {
    const { rec } = await runParser(parse, tempFeed('list.txt', '; Spamhaus EDROP List 2023/12/01\n2.56.247.0/24 ; SBL620754\n'));
    expect(valueAt(rec, 'threatList', '2.56.247.0/24')).toEqual({ list: 'edrop', reference: 'SBL620754' });
  });

  test('bad JSON lines and bad CIDRs are skipped by line number', async () => {
    const text = [
      '{"cidr":"192.0.2.0/24","sblid":"SBL1","rir":"arin"}',
      '{"cidr":"192.0.2.0/99","sblid":"SBL2"}',
      '{"sblid":"SBL3"}',
      '{"cidr":',
      '{"cidr":"2001:db8::/32","sblid":"SBL4"}',
      '{"type":"metadata","timestamp":1,"records":4}',
    ].join('\n');
    const { rec, ctx } = await runParser(parse, tempFeed('drop.json', text));
    expect(ctx.rows).toBe(2);
    expect(skippedLines(ctx)).toEqual([2, 3, 4]);
    expect(valueAt(rec, 'threatList', '2001:db8::/32')).toEqual({ list: 'dropv6', reference: 'SBL4' });
  });

  test('a file where nothing parses is a FeedError with the line', async () => {
    const path = tempFeed('drop.txt', '; Spamhaus DROP List\n<!doctype html>\n');
    const err = await runParser(parse, path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain(`${path}:2:`);
  });
});
