import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { parse } from '../../index-builder/parsers/rir-delegated.ts';
import { FeedError } from '../../index-builder/feed/source.ts';
import type { AllocationValue } from '../../index-builder/sink.ts';
import { parseCidr, parseIPv4, parseIPv6, type Addr } from '../../src/net/ip.ts';
import { RecordingSink, sourceFor } from '../helpers/recording-sink.ts';
import { tempFeed } from './temp-feed.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

async function run(path: string) {
  const rec = new RecordingSink();
  const ctx = sourceFor(path, { type: 'rir-delegated' });
  await parse(ctx, rec.sink);
  const calls = rec.of('allocation') as [4 | 6, Addr, Addr, AllocationValue][];
  return { ctx, calls, at: (start: Addr) => calls.find((c) => c[1] === start) };
}

const v4 = (s: string) => parseIPv4(s);
const v6 = (s: string) => parseIPv6(s)!;
/** The version lines' end dates: each block carries its file's date (bogon precedence). */
const APNIC_AS_OF = '2026-06-17T00:00:00.000Z';
const LACNIC_AS_OF = '2023-03-22T00:00:00.000Z';

describe('rir-delegated on real statistics', () => {
  testWithShared('APNIC 2026 (plain 7 fields, 27-line header, mirror comment at the end)', async () => {
    const { ctx, calls, at } = await run('rir/delegated-apnic-20260618.gz');
    // 54,666 ipv4 + 16,933 ipv6 rows (the summary lines' counts); asn rows are not skips.
    expect(ctx.rows).toBe(54666 + 16933);
    expect(ctx.date).toEqual({ at: APNIC_AS_OF, from: 'file' });
    expect(ctx.skipped).toBe(0);
    expect(calls.length).toBe(ctx.rows);
    expect(at(v4('1.0.0.0'))).toEqual([4, v4('1.0.0.0'), v4('1.0.0.255'), {
      registry: 'apnic', countryCode: 'AU', status: 'assigned', date: '2011-08-11', blockStart: v4('1.0.0.0'), blockEnd: v4('1.0.0.255'), asOf: APNIC_AS_OF,
    }]);
    // The one row with an empty cc.
    const p = parseCidr('2001:de3::/48')!;
    expect(at(p.start)).toEqual([6, p.start, p.end, { registry: 'apnic', status: 'assigned', date: '2025-07-03', blockStart: p.start, blockEnd: p.end, asOf: APNIC_AS_OF }]);
  }, 60_000);

  testWithShared('RIPE NCC 2014: an ipv4 count that is not a power of two stays one block', async () => {
    const { ctx, at } = await run('rir/delegated-ripencc-latest.gz');
    expect(ctx.rows).toBe(50134 + 9513);
    // The serial is epoch seconds here; the end date is the data's date.
    expect(ctx.date.at).toBe('2014-08-03T00:00:00.000Z');
    const start = v4('46.175.64.0');
    expect(at(start)).toEqual([4, start, start + 6143, {
      registry: 'ripencc', countryCode: 'UA', status: 'assigned', date: '2011-02-08', blockStart: start, blockEnd: start + 6143, asOf: '2014-08-03T00:00:00.000Z',
    }]);
  }, 60_000);

  testWithShared('LACNIC extended: 7-field available rows and 8-field rows', async () => {
    const { ctx, at } = await run('rir/delegated-lacnic-extended-latest.gz');
    expect(ctx.skipped).toBe(0);
    expect(ctx.rows).toBe(4 + 26602 + 19614 + 25896);
    const avail = v4('177.39.96.0');
    expect(at(avail)![3]).toEqual({ registry: 'lacnic', status: 'available', blockStart: avail, blockEnd: avail + 1023, asOf: LACNIC_AS_OF });
    const mx = parseCidr('2001:1200::/32')!;
    expect(at(mx.start)![3]).toEqual({ registry: 'lacnic', countryCode: 'MX', status: 'allocated', date: '2003-01-10', blockStart: mx.start, blockEnd: mx.end, asOf: LACNIC_AS_OF });
  }, 60_000);

  testWithShared('AFRINIC extended: ZZ country and empty date are left out', async () => {
    const { ctx, at } = await run('rir/delegated-afrinic-extended-20260505.gz');
    expect(ctx.rows).toBe(5958 + 8978);
    const p = parseCidr('2001:4201::/32')!;
    expect(at(p.start)![3]).toEqual({ registry: 'afrinic', status: 'reserved', blockStart: p.start, blockEnd: p.end, asOf: '2026-05-05T00:00:00.000Z' });
  });

  testWithShared('ARIN sample (epoch-ms serial, empty cc/date) and the NRO 9-field combined file', async () => {
    const arin = await run('rir/SAMPLE300-delegated-arin-extended-20190908.txt');
    expect(arin.ctx.rows).toBe(200);
    const p = parseCidr('2001:402::/31')!;
    expect(arin.at(p.start)![3]).toEqual({ registry: 'arin', status: 'reserved', blockStart: p.start, blockEnd: p.end, asOf: '2019-09-08T00:00:00.000Z' });
    const nro = await run('rir/SAMPLE19-nro-delegated-extended.txt');
    expect(nro.ctx.rows).toBe(11);
    expect(nro.ctx.skipped).toBe(0);
    expect(nro.calls.map((c) => c[3].registry)).toEqual(['apnic', 'apnic', 'apnic', 'ripencc', 'ripencc', 'ripencc', 'ripencc', 'apnic', 'apnic', 'ripencc', 'ripencc']);
    const zz = parseCidr('2001:601::/32')!;
    expect(nro.at(zz.start)![3]).toEqual({ registry: 'ripencc', status: 'reserved', date: '2016-04-06', blockStart: zz.start, blockEnd: zz.end, asOf: '2016-04-06T00:00:00.000Z' });
  });
});

describe('rir-delegated on bad input', () => {
  test('malformed rows are skipped with their line numbers', async () => {
    const path = tempFeed('delegated-bad.txt', [
      '# comment',
      '2.3|arin|1567951216119|300|19700101|20190908|-0400',
      'arin|*|ipv4|*|100|summary',
      'arin|US|ipv4|192.0.2.0|256|20010920|assigned|x',
      'arin|US|ipv4|192.0.2.0|0|20010920|assigned|x',
      'arin|US|ipv4|300.0.2.0|256|20010920|assigned|x',
      'arin|US|ipv6|2001:db8::|129|20010920|assigned|x',
      'arin|US|ipv4|255.255.255.0|512|20010920|assigned|x',
      'arin|US|ipv4|192.0.3.0|256|2001-09-20|assigned|x',
      'arin|US|ipv4|192.0.4.0|256',
      'arin|US|asn|64500|1|20010920|assigned|x',
      'arin|US|ipv5|1|1|20010920|assigned|x',
      'arin|USA|ipv4|192.0.5.0|256|20010920|assigned|x',
    ]);
    const { ctx } = await run(path);
    expect(ctx.rows).toBe(1);
    expect(ctx.skipSamples).toEqual([
      { line: 5, reason: 'bad address count 0' },
      { line: 6, reason: 'bad IPv4 start "300.0.2.0"' },
      { line: 7, reason: 'bad prefix length 129' },
      { line: 8, reason: 'bad address count 512' },
      { line: 9, reason: 'bad date "2001-09-20"' },
      { line: 10, reason: 'expected at least 7 |-separated fields, got 5' },
      { line: 12, reason: 'unknown record type "ipv5"' },
      { line: 13, reason: 'bad country code "USA"' },
    ]);
  });

  test('a file without a version line fails naming file and line', async () => {
    const path = tempFeed('not-delegated.txt', ['# header', 'prefix,asn', '1.0.0.0/24,13335']);
    const err = await run(path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toBe(`${path}:2: not RIR delegated statistics: expected a version line`);
  });
});
