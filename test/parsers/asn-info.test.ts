import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { detectLayout, parse, stripCountrySuffix } from '../../index-builder/parsers/asn-info.ts';
import { FeedError } from '../../index-builder/feed/source.ts';
import { RecordingSink, sourceFor } from '../helpers/recording-sink.ts';
import { tempFeed } from './temp-feed.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

async function run(path: string) {
  const rec = new RecordingSink();
  const ctx = sourceFor(path, { type: 'asn-info' });
  await parse(ctx, rec.sink);
  const names = new Map(rec.of('asnName').map(([asn, name]) => [asn as number, name as string]));
  return { ctx, calls: rec.of('asnName'), names };
}

describe('asn-info on real tables', () => {
  testWithShared('asn2org CSV ("asn","name","source")', async () => {
    const { ctx, names } = await run('asn/asn2org-asns.csv.gz');
    expect(ctx.rows).toBe(103861);
    expect(ctx.skipped).toBe(0);
    expect(names.get(1)).toBe('Level 3 Communications');
    expect(names.get(13335)).toBe('Cloudflare');
    expect(names.get(15169)).toBe('Google');
  }, 60_000);

  testWithShared('potaroo text (ASN<TAB>NAME, CC): country suffix removed, placeholders passed over', async () => {
    const { ctx, names } = await run('asn/potaroo-asn.txt.gz');
    // 120,835 lines less 4,092 "-Reserved AS-" and 1,023 "-Private Use AS-".
    expect(ctx.rows).toBe(120835 - 4092 - 1023);
    expect(ctx.skipped).toBe(0);
    expect(names.get(0)).toBeUndefined();
    expect(names.get(1)).toBe('LVLT-1');
    expect(names.get(13335)).toBe('CLOUDFLARENET');
    expect(names.get(402332)).toBe('IQVIA-DURHAM');
  }, 60_000);

  testWithShared('pyasn JSON map', async () => {
    const { ctx, names } = await run('asn/pyasn-asnames.json.gz');
    expect(ctx.rows).toBe(73852);
    expect(names.get(13335)).toBe('CLOUDFLARENET - CloudFlare, Inc.');
    expect(names.get(50088)).toBe('FITL-IE Fort Technologies');
  }, 60_000);
});

describe('asn-info other layouts and bad input', () => {
  test('layout detection and suffix stripping', () => {
    expect(detectLayout('"asn","name","source"')).toBe('asn2org');
    expect(detectLayout('asn,handle,description')).toBe('ipverse');
    expect(detectLayout('1\tLVLT-1, US')).toBe('potaroo');
    expect(detectLayout('ASN,Entity')).toBeNull();
    expect(stripCountrySuffix('GOOGLE, US')).toBe('GOOGLE');
    expect(stripCountrySuffix('Cloudflare, Inc.')).toBe('Cloudflare, Inc.');
  });

  test('ipverse CSV (asn,handle,description): fixture in the documented layout', async () => {
    // No ipverse as.csv snapshot exists (MANIFEST "Not found"); rows follow its header.
    const path = tempFeed('as.csv', [
      'asn,handle,description',
      '13335,CLOUDFLARENET,"Cloudflare, Inc."',
      '15169,GOOGLE,',
      'x1,BAD,row',
      '16509,AMAZON-02',
    ]);
    const { ctx, calls } = await run(path);
    expect(calls).toEqual([[13335, 'Cloudflare, Inc.'], [15169, 'GOOGLE']]);
    expect(ctx.skipSamples).toEqual([
      { line: 4, reason: 'bad ASN "x1"' },
      { line: 5, reason: 'expected asn,handle,description' },
    ]);
  });

  test('an unknown layout fails naming file and line', async () => {
    const path = tempFeed('asn-list.csv', ['# comment?', 'ASN,Entity', '3223,"VOXILITY, RO"']);
    const err = await run(path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toBe(`${path}:1: unknown ASN table layout (expected asn2org, ipverse or potaroo text)`);
  });
});
