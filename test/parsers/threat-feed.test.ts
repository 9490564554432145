import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { FeedError } from '../../index-builder/feed/source.ts';
import { isoUtc, parse } from '../../index-builder/parsers/threat-feed.ts';
import { splitCsvLine } from '../../index-builder/feed/csv-fields.ts';
import { runParser, skippedLines, tempFeed, valueAt } from './feed-test-kit.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

describe('threat-feed: Feodo Tracker CSV (real snapshot)', () => {
  testWithShared('28 entries, header block and `# END` line (no final newline) handled', async () => {
    const { rec, ctx } = await runParser(parse, 'threat/feodotracker-ipblocklist.csv');
    expect(ctx.rows).toBe(28);
    expect(ctx.skipped).toBe(0);
    expect(valueAt(rec, 'threatFeed', '192.9.135.73')).toEqual({
      malware: 'Pikabot', firstSeen: '2023-05-23T17:51:44Z', lastSeen: '2024-04-01', port: 1194, status: 'online',
    });
    expect(valueAt(rec, 'threatFeed', '172.233.221.61')).toEqual({
      malware: 'Pikabot', firstSeen: '2024-04-04T07:03:03Z', lastSeen: '2024-04-04', port: 5938, status: 'offline',
    });
  });
});

describe('threat-feed: Feodo Tracker JSON', () => {
  // No ipblocklist.json snapshot exists here; this fixture follows abuse.ch's
  // documented fields (ip_address, port, status, hostname, as_number, as_name,
  // country, first_seen, last_online, malware).
  const fixture = [
    { ip_address: '198.51.100.23', port: 443, status: 'online', hostname: null, as_number: 64500, as_name: 'EXAMPLE-AS', country: 'US', first_seen: '2024-03-01 10:11:12', last_online: '2024-04-03', malware: 'QakBot' },
    { ip_address: '2001:db8::5', port: 8080, status: 'offline', hostname: 'c2.example', as_number: 64501, as_name: 'X', country: 'DE', first_seen: '2024-01-02 00:00:01', last_online: null, malware: 'Emotet' },
    { ip_address: 'not-an-ip', port: 1, status: 'online', malware: 'X' },
    { ip_address: '198.51.100.23', port: 8443, status: 'online', malware: 'QakBot' },
  ];

  test('entries map to the sidecar value; bad addresses skipped; one value per address', async () => {
    const { rec, ctx } = await runParser(parse, tempFeed('ipblocklist.json', JSON.stringify(fixture, null, 2)));
    expect(ctx.rows).toBe(2);
    expect(ctx.skipSamples.map((s) => s.reason)).toEqual(['[2].ip_address: not an IP address: "not-an-ip"']);
    expect(valueAt(rec, 'threatFeed', '198.51.100.23')).toEqual({
      malware: 'QakBot', firstSeen: '2024-03-01T10:11:12Z', lastSeen: '2024-04-03', port: 443, status: 'online',
    });
    expect(valueAt(rec, 'threatFeed', '2001:db8::5')).toEqual({ malware: 'Emotet', firstSeen: '2024-01-02T00:00:01Z', port: 8080, status: 'offline' });
  });

  test('JSON that is not an array is a FeedError', async () => {
    const path = tempFeed('ipblocklist.json', '{"query_status":"ok"}');
    await expect(runParser(parse, path)).rejects.toThrow(FeedError);
  });
});

describe('threat-feed input checks', () => {
  test('CSV rows with bad addresses are skipped by line number', async () => {
    const text = [
      '# header',
      '"first_seen_utc","dst_ip","dst_port","c2_status","last_online","malware"',
      '"2024-01-01 00:00:00","192.0.2.9","443","online","2024-01-02","Dridex"',
      '"2024-01-01 00:00:00","999.0.2.9","443","online","2024-01-02","Dridex"',
      '"2024-01-01 00:00:00,"192.0.2.10"',
      '# END 3 entries',
    ].join('\n');
    const { ctx } = await runParser(parse, tempFeed('ipblocklist.csv', text));
    expect(ctx.rows).toBe(1);
    expect(skippedLines(ctx)).toEqual([4, 5]);
  });

  test('CSV without the header row is a FeedError naming the line', async () => {
    const path = tempFeed('ipblocklist.csv', '# Feodo\n192.0.2.9,443\n');
    const err = await runParser(parse, path).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain(`${path}:2: expected the header row`);
  });

  test('splitCsvLine and isoUtc', () => {
    expect(splitCsvLine('51447, "RootLayer, NL"')).toEqual(['51447', 'RootLayer, NL']);
    expect(splitCsvLine('"a ""q"" b",,c')).toEqual(['a "q" b', '', 'c']);
    expect(splitCsvLine('"open,x')).toBeNull();
    expect(isoUtc('2024-04-04 07:03:03')).toBe('2024-04-04T07:03:03Z');
    expect(isoUtc('2024-04-04')).toBe('2024-04-04');
    expect(isoUtc('2024-13-45 00:00:00')).toBeUndefined();
    expect(isoUtc('yesterday')).toBeUndefined();
  });
});
