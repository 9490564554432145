import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { resolve } from 'node:path';
import { parse } from '../../index-builder/parsers/asn-csv.ts';
import { FeedError } from '../../index-builder/feed/source.ts';
import { parseIPv4, parseIPv6 } from '../../src/net/ip.ts';
import { RecordingSink, sourceFor } from '../helpers/recording-sink.ts';
import { tempFeed } from './temp-feed.ts';

const ASN_DIR = resolve(import.meta.dir, '../../node_modules/@ip-location-db/asn');

async function run(path: string, options = {}) {
  const rec = new RecordingSink();
  const ctx = sourceFor(path, { type: 'asn-csv', ...options });
  const t = performance.now();
  await parse(ctx, rec.sink);
  return { ctx, calls: rec.of('asn'), ms: performance.now() - t };
}

describe('asn-csv on ip-location-db asn', () => {
  test('asn-ipv4.csv: every line, quoted orgs with commas and doubled quotes', async () => {
    const { ctx, calls, ms } = await run(`${ASN_DIR}/asn-ipv4.csv`);
    console.log(`asn-ipv4.csv: ${ctx.rows} rows in ${ms.toFixed(0)} ms`);
    expect(ctx.rows).toBe(411961);
    expect(ctx.skipped).toBe(0);
    expect(calls[0]).toEqual([4, parseIPv4('1.0.0.0'), parseIPv4('1.0.0.255'), 13335, 'Cloudflare, Inc.']);
    const sputnik = calls.find((c) => c[1] === parseIPv4('2.26.200.0'))!;
    expect(sputnik).toEqual([4, parseIPv4('2.26.200.0'), parseIPv4('2.26.215.255'), 201907, 'LLC "SPUTNIK"']);
    expect(calls.at(-1)).toEqual([4, parseIPv4('223.255.254.0'), parseIPv4('223.255.254.255'), 55415, 'Marina Bay Sands Pte Ltd']);
  }, 60_000);

  test('asn-ipv6.csv and the -num variant give the same ranges', async () => {
    const text = await run(`${ASN_DIR}/asn-ipv6.csv`);
    const num = await run(`${ASN_DIR}/asn-ipv6-num.csv`);
    console.log(`asn-ipv6.csv: ${text.ctx.rows} rows in ${text.ms.toFixed(0)} ms`);
    expect(text.ctx.rows).toBe(103197);
    expect(num.ctx.rows).toBe(103197);
    expect(text.calls[0]).toEqual([6, parseIPv6('2001::'), parseIPv6('2001::ffff:ffff:ffff:ffff:ffff:ffff'), 6939, 'Hurricane Electric LLC']);
    expect(num.calls.slice(0, 1000)).toEqual(text.calls.slice(0, 1000));
    expect(num.calls.at(-1)).toEqual(text.calls.at(-1)!);
  }, 60_000);

  test('asn-ipv4-num.csv reads integer addresses as IPv4', async () => {
    const { ctx, calls } = await run(`${ASN_DIR}/asn-ipv4-num.csv`);
    expect(ctx.rows).toBe(411961);
    expect(calls[0]).toEqual([4, 16777216, 16777471, 13335, 'Cloudflare, Inc.']);
  }, 60_000);
});

describe('asn-csv on bad input', () => {
  test('malformed lines are skipped with their line numbers', async () => {
    const path = tempFeed('bad-asn.csv', [
      '1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."',
      '1.0.1.0,1.0.0.255,1,reversed',
      '1.0.2.0,1.0.2.255,AS5,letters in asn',
      '1.0.3.0,2001::,5,mixed families',
      '1.0.4.0,1.0.4.255,7,"unterminated',
      '999.0.0.0,999.0.0.1,8,bad address',
      '',
      '::1,::1,9,',
      '1.0.5.0,1.0.5.255',
    ]);
    const { ctx, calls } = await run(path);
    expect(ctx.rows).toBe(2);
    expect(calls[1]).toEqual([6, 1n, 1n, 9, undefined]);
    expect(ctx.skipSamples.map((s) => s.line)).toEqual([2, 3, 4, 5, 6, 9]);
    expect(ctx.skipSamples[0].reason).toContain('start address after end');
    expect(ctx.skipSamples[1].reason).toContain('bad ASN');
  });

  test('a file of another format fails naming file and line', async () => {
    const path = tempFeed('not-asn.csv', Array.from({ length: 12 }, (_, i) => `hello world ${i}`));
    const err = await run(path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toBe(`${path}:10: not an ASN CSV (start,end,asn,org): no line parses`);
  });
});
