import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { parse } from '../../index-builder/parsers/tor-exits.ts';
import { runParser, skippedLines, tempFeed, valuesAt } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

describe('tor-exits', () => {
  testWithShared('exit-addresses: 2,378 ExitAddress lines, 1,174 distinct addresses', async () => {
    const { rec, ctx } = await runParser(parse, 'tor/exit-addresses');
    expect(ctx.skipped).toBe(0);
    expect(ctx.rows).toBe(1174);
    expect(rec.of('torExit')[0]).toEqual([4, 0xb9f1d0e8, 0xb9f1d0e8]); // 185.241.208.232
    expect(valuesAt(rec, 'torExit', '171.25.193.25')).toHaveLength(1);
  });

  testWithShared('torbulkexitlist: one address a line, same 1,174 addresses', async () => {
    const bulk = await runParser(parse, 'tor/torbulkexitlist');
    const blocks = await runParser(parse, 'tor/exit-addresses');
    expect(bulk.ctx.rows).toBe(1174);
    const key = (c: unknown[]) => String(c[1]);
    expect(new Set(bulk.rec.of('torExit').map(key))).toEqual(new Set(blocks.rec.of('torExit').map(key)));
  });

  test('IPv6 addresses, duplicates and bad lines', async () => {
    const text = [
      'ExitNode ABC', 'Published 2024-03-11 13:07:19', 'LastStatus 2024-03-12 08:00:00',
      'ExitAddress 2001:db8::1 2024-03-12 08:10:51', 'ExitAddress 192.0.2.1 2024-03-12 08:10:51',
      'ExitAddress 192.0.2.1 2024-03-12 09:10:51', 'ExitAddress nothing', 'Garbage line here', '198.51.100.7',
    ].join('\n');
    const { rec, ctx } = await runParser(parse, tempFeed('exits', text));
    expect(ctx.rows).toBe(3);
    expect(skippedLines(ctx)).toEqual([7, 8]);
    expect(valuesAt(rec, 'torExit', '2001:db8::1')).toHaveLength(1);
  });

  test('a file with no addresses is a FeedError', async () => {
    const path = tempFeed('exits', '<html>\n</html>\n');
    const err = await runParser(parse, path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain(`${path}:1:`);
  });
});
