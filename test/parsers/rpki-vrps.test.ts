import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { makeVrp, parse, parseAsnValue } from '../../index-builder/parsers/rpki-vrps.ts';
import { FeedError } from '../../index-builder/feed/source.ts';
import type { VrpValue } from '../../index-builder/sink.ts';
import { parseCidr } from '../../src/net/ip.ts';
import { RecordingSink, sourceFor } from '../helpers/recording-sink.ts';
import { tempFeed } from './temp-feed.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

async function run(path: string) {
  const rec = new RecordingSink();
  const ctx = sourceFor(path, { type: 'rpki-vrps' });
  await parse(ctx, rec.sink);
  return { ctx, vrps: rec.of('vrp').map((a) => a[0] as VrpValue) };
}

function vrp(asn: number, cidr: string, maxLength: number): VrpValue {
  const p = parseCidr(cidr)!;
  return { family: p.family, asn, start: p.start, end: p.end, prefixLen: p.len, maxLength };
}

describe('rpki-vrps on real exports', () => {
  testWithShared('RIPE validator CSV sample (ASN,IP Prefix,Max Length)', async () => {
    const { ctx, vrps } = await run('rpki/SAMPLE50-ripe-validator-roas-export.csv');
    expect(ctx.rows).toBe(49);
    expect(ctx.skipped).toBe(0);
    expect(vrps[0]).toEqual(vrp(31207, '86.106.22.0/24', 24));
    expect(vrps[2]).toEqual(vrp(2200, '2001:660::/32', 32));
    expect(vrps.at(-1)).toEqual(vrp(12741, '213.216.64.0/18', 18));
  });

  testWithShared('gortr/rpki-client JSON (DN42 sample): AS-prefixed strings; its three broken entries are skipped', async () => {
    const { ctx, vrps } = await run('rpki/DN42-NOT-INTERNET-export_dn42.json.gz');
    expect(ctx.rows).toBe(3309);
    expect(vrps[0]).toEqual(vrp(4242420916, 'fd00:114:514::/48', 64));
    expect(vrps.filter((v) => v.family === 6).length).toBe(1553);
    expect(ctx.skipSamples).toEqual([
      { line: 124, reason: 'roas[123]: bad prefix "null"' },
      { line: 1561, reason: 'roas[1560]: bad ASN "AS"' },
      { line: 3312, reason: 'roas[3311]: bad ASN "AS"' },
    ]);
  });
});

describe('rpki-vrps other layouts and bad input', () => {
  test('parts', () => {
    expect(parseAsnValue(13335)).toBe(13335);
    expect(parseAsnValue('AS13335')).toBe(13335);
    expect(parseAsnValue('as13335')).toBe(13335);
    expect(parseAsnValue('13335')).toBe(13335);
    expect(parseAsnValue('AS')).toBe(-1);
    expect(parseAsnValue(-1)).toBe(-1);
    expect(makeVrp(1, '192.0.2.0/24', undefined)).toEqual(vrp(1, '192.0.2.0/24', 24));
    expect(makeVrp(1, '192.0.2.0/24', 23)).toBe('max length 23 outside 24..32');
    expect(makeVrp(1, '2001:db8::/32', 129)).toBe('max length 129 outside 32..128');
  });

  test('Routinator/RIPE archive CSV with URI and validity columns (fixture in the documented layout)', async () => {
    const path = tempFeed('roas.csv', [
      'URI,ASN,IP Prefix,Max Length,Not Before,Not After',
      'rsync://rpki.afrinic.net/repository/member_repository/F36505B2/1.roa,AS37100,102.67.56.0/21,24,2021-12-01 00:00:00,2022-12-01 00:00:00',
      'rsync://x/2.roa,AS37100,102.67.56.0/21,20,2021-12-01 00:00:00,2022-12-01 00:00:00',
      'rsync://x/3.roa,AS37100,2c0f:f000::/32,,2021-12-01 00:00:00,2022-12-01 00:00:00',
      'rsync://x/4.roa,AS37100',
      'rsync://x/5.roa,ASX,102.67.56.0/21,24,,',
    ]);
    const { ctx, vrps } = await run(path);
    expect(vrps).toEqual([vrp(37100, '102.67.56.0/21', 24), vrp(37100, '2c0f:f000::/32', 32)]);
    expect(ctx.skipSamples).toEqual([
      { line: 3, reason: 'max length 20 outside 21..32' },
      { line: 5, reason: 'too few columns' },
      { line: 6, reason: 'bad ASN "ASX"' },
    ]);
  });

  test('JSON without roas, or CSV without the header, fails naming the file', async () => {
    const json = tempFeed('vrps.json', ['{"metadata": {"counts": 0}}']);
    const e1 = await run(json).catch((e) => e);
    expect(e1).toBeInstanceOf(FeedError);
    expect(e1.message).toBe(`${json}: JSON without a "roas" array`);
    const csv = tempFeed('vrps.csv', ['', 'AS1,192.0.2.0/24,24']);
    const e2 = await run(csv).catch((e) => e);
    expect(e2).toBeInstanceOf(FeedError);
    expect(e2.message).toBe(`${csv}:2: expected rpki-client JSON or a CSV header with ASN,IP Prefix,Max Length`);
  });
});
