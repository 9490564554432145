import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { parse, parseRisOrigin } from '../../index-builder/parsers/ris-whois.ts';
import { FeedError } from '../../index-builder/feed/source.ts';
import { parseCidr } from '../../src/net/ip.ts';
import { RecordingSink, sourceFor } from '../helpers/recording-sink.ts';
import { tempFeed } from './temp-feed.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

async function run(path: string, options: Record<string, unknown> = {}) {
  const rec = new RecordingSink();
  const ctx = sourceFor(path, { type: 'ris-whois', ...options });
  const t = performance.now();
  await parse(ctx, rec.sink);
  return { ctx, calls: rec.of('route'), ms: performance.now() - t };
}

function route(calls: unknown[][], cidr: string) {
  const p = parseCidr(cidr)!;
  return calls.find((c) => c[1] === p.start && (c[3] as { prefixLen: number }).prefixLen === p.len);
}

describe('ris-whois on the RIS IPv6 dump (2022-05-27)', () => {
  testWithShared('aggregates origins per prefix, drops ::/0 and low-visibility origins', async () => {
    const { ctx, calls, ms } = await run('routing/riswhoisdump.IPv6-20220527.gz');
    console.log(`riswhoisdump.IPv6-20220527.gz: ${ctx.rows} prefixes in ${ms.toFixed(0)} ms`);
    // Distinct prefixes (other than ::/0) with at least one origin seen by >= 10 peers.
    expect(ctx.rows).toBe(158212);
    expect(ctx.skipped).toBe(0);
    expect(route(calls, '::/0')).toBeUndefined();
    // 2001::/32: 1101 (89 peers) and 6939 (245) kept; 29432, 50058, 211722 (2-3 peers) dropped.
    const teredo = parseCidr('2001::/32')!;
    expect(route(calls, '2001::/32')).toEqual([6, teredo.start, teredo.end, { prefixLen: 32, origins: [1101, 6939] }]);
    expect(route(calls, '2001:410::/32')![3]).toEqual({ prefixLen: 32, origins: [271, 7860, 8111, 10972, 53904], asSet: true });
  }, 60_000);

  testWithShared('minPeers 0 keeps every origin', async () => {
    const { ctx, calls } = await run('routing/SAMPLE50-riswhoisdump.IPv6.txt', { minPeers: 0 });
    expect(route(calls, '2001::/32')![3]).toEqual({ prefixLen: 32, origins: [6939, 1101, 29432, 25192, 12816] });
    expect(route(calls, '::/0')).toBeUndefined();
    expect(ctx.skipped).toBe(0);
  });

  testWithShared('IPv4 sample with the default threshold', async () => {
    const { ctx, calls } = await run('routing/SAMPLE50-riswhoisdump.IPv4.txt');
    expect(ctx.rows).toBe(23);
    expect(route(calls, '1.0.4.0/24')![3]).toEqual({ prefixLen: 24, origins: [56203] });
    expect(route(calls, '1.0.48.0/20')).toBeUndefined(); // seen by 2 peers
    expect(route(calls, '1.0.160.0/21')![3]).toEqual({ prefixLen: 21, origins: [23969] }); // seen by 12
  });
});

describe('ris-whois aggregation (generated dump)', () => {
  test('a prefix met again anywhere in the file gathers its origins in order, once each; reported in order of first sight', async () => {
    const path = tempFeed('ris-order.txt', [
      '64500\t2001:db8::/32\t100',
      '64501\t192.0.2.0/24\t100',
      '{64502,64500}\t2001:db8::/32\t100',
      '64503\t198.51.100.0/24\t3',
      '64500\t2001:db8::/32\t100',
      '64504\t192.0.2.0/24\t100',
      '64505\t2001:db8:1::1/48\t100',
      '64503\t198.51.100.0/24\t50',
    ]);
    const { ctx, calls } = await run(path);
    const range = (c: string) => [parseCidr(c)!.start, parseCidr(c)!.end];
    expect(calls).toEqual([
      [6, ...range('2001:db8::/32'), { prefixLen: 32, origins: [64500, 64502], asSet: true }],
      [4, ...range('192.0.2.0/24'), { prefixLen: 24, origins: [64501, 64504] }],
      // Host bits are cleared; the prefix seen first by too few peers counts once a line passes.
      [6, ...range('2001:db8:1::/48'), { prefixLen: 48, origins: [64505] }],
      [4, ...range('198.51.100.0/24'), { prefixLen: 24, origins: [64503] }],
    ]);
    expect(ctx.rows).toBe(4);
  });
});

describe('ris-whois bad input', () => {
  test('origin forms', () => {
    expect(parseRisOrigin('3356')).toEqual({ asns: [3356], asSet: false });
    expect(parseRisOrigin('{1,2}')).toEqual({ asns: [1, 2], asSet: true });
    expect(parseRisOrigin('{1,x}')).toBeNull();
    expect(parseRisOrigin('')).toBeNull();
  });

  test('malformed lines are skipped with their numbers; a bad minPeers fails', async () => {
    const path = tempFeed('ris-bad.txt', [
      '% header',
      '',
      '64500\t192.0.2.0/24\t100',
      '64501\t192.0.2.0/24\t100',
      'AS64502\t198.51.100.0/24\t100',
      '64503\t198.51.100.0/33\t100',
      '64504\t203.0.113.0/24\tmany',
      '64505 203.0.113.0/24 100',
    ]);
    const { ctx, calls } = await run(path);
    expect(calls).toEqual([[4, parseCidr('192.0.2.0/24')!.start, parseCidr('192.0.2.0/24')!.end, { prefixLen: 24, origins: [64500, 64501] }]]);
    expect(ctx.skipSamples).toEqual([
      { line: 5, reason: 'bad origin "AS64502"' },
      { line: 6, reason: 'bad prefix "198.51.100.0/33"' },
      { line: 7, reason: 'bad peer count "many"' },
      { line: 8, reason: 'expected origin<TAB>prefix<TAB>peers' },
    ]);
    const err = await run(path, { minPeers: 'lots' }).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toBe(`${path}: "minPeers" must be a non-negative integer`);
  });

  test('a file of another format fails naming file and line', async () => {
    const path = tempFeed('not-ris.txt', Array.from({ length: 10 }, (_, i) => `10.0.${i}.0/24 AS64500`));
    const err = await run(path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toBe(`${path}:10: not a RIS whois dump: no line parses`);
  });
});
