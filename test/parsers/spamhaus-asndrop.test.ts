import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { parse } from '../../index-builder/parsers/spamhaus-asndrop.ts';
import { runParser, skippedLines, tempFeed } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

describe('spamhaus-asndrop', () => {
  testWithShared('real asndrop.json: 201 records, metadata trailer ignored', async () => {
    const { rec, ctx } = await runParser(parse, 'threat/spamhaus-asndrop.json');
    expect(ctx.rows).toBe(201);
    expect(ctx.skipped).toBe(0);
    expect(rec.of('asnDrop')[0]).toEqual([{ asn: 932, asName: 'XNNET', rir: 'arin', domain: 'xn.net', countryCode: 'US' }]);
  });

  test('bad lines are skipped by number; empty fields are left out', async () => {
    const text = [
      '{"asn":64512,"rir":"RIPE","domain":"","cc":"","asname":"X"}',
      '{"asn":"AS64513","asname":"Y"}',
      '{"asn":"nope"}',
      'not json',
      '[1]',
      '{"type":"metadata","records":2}',
    ].join('\n');
    const { rec, ctx } = await runParser(parse, tempFeed('asndrop.json', text));
    expect(rec.of('asnDrop')).toEqual([[{ asn: 64512, asName: 'X', rir: 'ripe' }], [{ asn: 64513, asName: 'Y' }]]);
    expect(skippedLines(ctx)).toEqual([3, 4, 5]);
  });

  test('a file with no records is a FeedError', async () => {
    const path = tempFeed('asndrop.json', '{"type":"metadata","records":0}\nnot json\n');
    const err = await runParser(parse, path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain(`${path}:2:`);
  });
});
