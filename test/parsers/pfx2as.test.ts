import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { parse, parseOrigins } from '../../index-builder/parsers/pfx2as.ts';
import { FeedError } from '../../index-builder/feed/source.ts';
import { parseCidr } from '../../src/net/ip.ts';
import { RecordingSink, sourceFor } from '../helpers/recording-sink.ts';
import { tempFeed } from './temp-feed.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

async function run(path: string) {
  const rec = new RecordingSink();
  const ctx = sourceFor(path, { type: 'pfx2as' });
  const t = performance.now();
  await parse(ctx, rec.sink);
  return { ctx, calls: rec.of('route'), ms: performance.now() - t };
}

function route(calls: unknown[][], cidr: string) {
  const p = parseCidr(cidr)!;
  return calls.find((c) => c[1] === p.start && (c[3] as { prefixLen: number }).prefixLen === p.len);
}

describe('pfx2as on the RouteViews snapshot', () => {
  testWithShared('every line, with single origins, MOAS and AS-sets', async () => {
    const { ctx, calls, ms } = await run('routing/routeviews-rv2-20240406-1200.pfx2as.gz');
    console.log(`routeviews-rv2-20240406-1200.pfx2as.gz: ${ctx.rows} rows in ${ms.toFixed(0)} ms`);
    expect(ctx.rows).toBe(998042);
    expect(ctx.skipped).toBe(0);
    const p = parseCidr('1.0.0.0/24')!;
    expect(calls[0]).toEqual([4, p.start, p.end, { prefixLen: 24, origins: [13335] }]);
    expect(route(calls, '1.2.4.0/24')![3]).toEqual({ prefixLen: 24, origins: [24151, 24409] });
    expect(route(calls, '49.15.128.0/20')![3]).toEqual({ prefixLen: 20, origins: [45271, 55644], asSet: true });
    const combined = route(calls, '67.14.0.0/17')!;
    expect(combined).toEqual([4, parseCidr('67.14.0.0/17')!.start, parseCidr('67.14.0.0/17')!.end, { prefixLen: 17, origins: [209, 3356, 6223, 6224, 19901], asSet: true }]);
  }, 60_000);
});

describe('pfx2as origins and bad input', () => {
  test('origin column forms', () => {
    expect(parseOrigins('13335')).toEqual({ origins: [13335], asSet: false });
    expect(parseOrigins('1_2_1')).toEqual({ origins: [1, 2], asSet: false });
    expect(parseOrigins('1,2')).toEqual({ origins: [1, 2], asSet: true });
    expect(parseOrigins('1__2')).toBe('bad origin AS ""');
    expect(parseOrigins('AS1')).toBe('bad origin AS "AS1"');
  });

  test('IPv6 lines (rv6 layout) and malformed lines with their numbers', async () => {
    const path = tempFeed('rv6.pfx2as', [
      '2001:db8::\t32\t64500',
      '192.0.2.0\t33\t64500',
      '192.0.2.0\t24',
      '192.0.2.0 24 64500',
      '192.0.2.0\t24\t64500_x',
      '2001:db8::zz\t32\t64500',
      '198.51.100.7\t24\t64501',
    ]);
    const { ctx, calls } = await run(path);
    expect(ctx.rows).toBe(2);
    const v6 = parseCidr('2001:db8::/32')!;
    expect(calls[0]).toEqual([6, v6.start, v6.end, { prefixLen: 32, origins: [64500] }]);
    // Host bits below the mask are cleared.
    expect(calls[1].slice(1, 3)).toEqual([parseCidr('198.51.100.0/24')!.start, parseCidr('198.51.100.0/24')!.end]);
    expect(ctx.skipSamples).toEqual([
      { line: 2, reason: 'bad prefix length "33"' },
      { line: 3, reason: 'expected prefix<TAB>length<TAB>asn' },
      { line: 4, reason: 'expected prefix<TAB>length<TAB>asn' },
      { line: 5, reason: 'bad origin AS "x"' },
      { line: 6, reason: 'bad IPv6 prefix "2001:db8::zz"' },
    ]);
  });

  test('a file of another format fails naming file and line', async () => {
    const path = tempFeed('not-pfx2as.csv', Array.from({ length: 10 }, (_, i) => `10.0.${i}.0/24,64500`));
    const err = await run(path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toBe(`${path}:10: not a RouteViews prefix2as file: no line parses`);
  });
});
