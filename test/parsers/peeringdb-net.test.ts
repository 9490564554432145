import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { resolve } from 'node:path';
import { FeedError } from '../../index-builder/feed/source.ts';
import { dataEntryLines, parse } from '../../index-builder/parsers/peeringdb-net.ts';
import { runParser, skippedLines, tempFeed } from './feed-test-kit.ts';

const FIXTURE = resolve(import.meta.dir, 'fixtures/peeringdb-net.json');

describe('peeringdb-net', () => {
  test('a net dump in PeeringDB format: every info_type value, info_types preferred, undisclosed types name nothing', async () => {
    const { rec, ctx } = await runParser(parse, FIXTURE);
    expect(ctx.rows).toBe(13);
    expect(ctx.skipped).toBe(0);
    expect(rec.of('asnNetworkType')).toEqual([
      [64500, 'cable_dsl_isp'],
      [64501, 'nsp'],
      // info_types ["Content", "NSP"]: the content network keeps its own type.
      [64502, 'content'],
      [64503, 'enterprise'],
      [64504, 'educational_research'],
      [64505, 'government'],
      [64506, 'non_profit'],
      [64507, 'route_server'],
      [64508, 'network_services'],
      [64509, 'route_collector'],
      // info_types ["NSP", "Cable/DSL/ISP"] (info_type "NSP"): the access type wins.
      [64512, 'cable_dsl_isp'],
    ]);
    // The parser reports types only: names stay with the ASN sources.
    expect(rec.of('asnName')).toEqual([]);
  });

  test('bad entries are skipped with the line they start on; the first entry of an ASN wins', async () => {
    const text = [
      '{"meta": {"data": [1]}, "data": [',
      '  {"asn": 64500, "info_type": "Cable/DSL/ISP", "name": "A"},',
      '  {"asn": "AS64501", "info_types": ["Content"]},',
      '  {"asn": 0, "info_type": "NSP"},',
      '  {"asn": 64502, "info_type": "Satellite"},',
      '  {"asn": 64503, "info_types": [7]},',
      '  "not an object",',
      '  {"asn": 64500, "info_type": "NSP", "name": "a \\"quoted\\" [name], {x}"},',
      '  {"info_type": "NSP"}',
      ']}',
    ].join('\n');
    const { rec, ctx } = await runParser(parse, tempFeed('net.json', text));
    expect(rec.of('asnNetworkType')).toEqual([
      [64500, 'cable_dsl_isp'],
      [64501, 'content'],
    ]);
    expect(skippedLines(ctx)).toEqual([4, 5, 6, 7, 9]);
    expect(ctx.skipSamples.map((s) => s.reason)).toEqual([
      'not an ASN: "0"',
      'AS64502: unknown info_type "Satellite"',
      'AS64503: info_type "7" is not text',
      'entry is not an object',
      'not an ASN: "missing"',
    ]);
  });

  test('the line of each data entry, whatever the layout', () => {
    expect(dataEntryLines('{"data":[{"asn":1},{"asn":2}]}')).toEqual([1, 1]);
    expect(dataEntryLines('{"x": "data", "data": [\n{"asn": 1,\n"name": "[\\n"},\n\n {"asn": 2}\n]}')).toEqual([2, 5]);
    expect(dataEntryLines('{"data": []}')).toEqual([]);
  });

  test('not a net dump, or no usable entry: a FeedError naming the file', async () => {
    const wrongShape = tempFeed('shape.json', '{"results": []}');
    expect((await runParser(parse, wrongShape).catch((e) => e)).message).toContain('expected a PeeringDB net dump');
    const broken = tempFeed('broken.json', '{"data": [');
    expect(await runParser(parse, broken).catch((e) => e)).toBeInstanceOf(FeedError);
    const allBad = tempFeed('bad.json', '{"data": [\n{"asn": "x"}\n]}');
    const err = await runParser(parse, allBad).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain(`${allBad}:2:`);
  });
});
