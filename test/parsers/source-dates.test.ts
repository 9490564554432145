/**
 * Every source carries its date: the file's own where the format states one
 * (read by the type's parser through SourceContext.reportDate), else the
 * manifest `date`, else the file's mtime.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { utimesSync } from 'node:fs';
import type { FeedParser } from '../../index-builder/feed/source.ts';
import { runParser } from './feed-test-kit.ts';
import { tempFeed } from './temp-feed.ts';
import { testWithShared } from '../helpers/shared-feeds.ts';

const parser = async (type: string): Promise<FeedParser> => (await import(`../../index-builder/parsers/${type}.ts`)).parse;

/** [type, file under shared/feeds, manifest options, the date the file states]. */
const STATED: Array<[string, string, Record<string, string>, string]> = [
  ['tor-exits', 'tor/exit-addresses', {}, '2024-03-12T14:00:00.000Z'],
  ['bogons', 'bogons/fullbogons-ipv4.txt', {}, '2024-03-10T16:55:01.000Z'],
  ['rir-delegated', 'rir/delegated-afrinic-extended-20260505.gz', {}, '2026-05-05T00:00:00.000Z'],
  ['ris-whois', 'routing/riswhoisdump.IPv6-20220527.gz', {}, '2022-05-27T02:06:01.000Z'],
  ['pfx2as', 'routing/routeviews-rv2-20240406-1200.pfx2as.gz', {}, '2024-04-06T12:00:00.000Z'],
  ['cloud-aws', 'cloud/aws-ip-ranges.json', {}, '2026-08-21T07:37:05.000Z'],
  ['cloud-gcp', 'cloud/google-cloud.json', {}, '2026-08-21T01:05:42.583Z'],
  ['cloud-oracle', 'cloud/oracle-public_ip_ranges.json', {}, '2026-07-27T06:55:33.696Z'],
  ['geofeed', 'cloud/linode-geofeed.csv', { category: 'datacenter' }, '2025-07-24T10:00:06.000Z'],
  ['provider-ranges', 'cloud/atlassian-ip-ranges.json', { format: 'atlassian', category: 'webhook' }, '2026-06-17T04:08:46.684Z'],
  ['provider-ranges', 'cloud/vultr-geofeed.json', { format: 'vultr-geofeed', category: 'datacenter' }, '2024-04-18T11:55:40.000Z'],
  ['crawler-ranges', 'crawlers/googlebot.json', { crawler: 'googlebot' }, '2026-08-21T14:45:42.000Z'],
  ['spamhaus-drop', 'threat/spamhaus-drop_v4.json', {}, '2026-07-23T09:14:02.000Z'],
  ['spamhaus-drop', 'threat/spamhaus-drop.txt', {}, '2025-01-17T17:03:47.000Z'],
  ['spamhaus-asndrop', 'threat/spamhaus-asndrop.json', {}, '2024-02-27T03:55:05.000Z'],
  ['threat-feed', 'threat/feodotracker-ipblocklist.csv', {}, '2024-04-04T07:03:03.000Z'],
];

describe('source dates from the files themselves', () => {
  for (const [type, path, options, date] of STATED) {
    testWithShared(`${type} ${path}: ${date}`, async () => {
      // A manifest date does not override what the file states.
      const { ctx } = await runParser(await parser(type), path, { type, ...options, date: '2020-01-01' });
      expect(ctx.date).toEqual({ at: date, from: 'file' });
    }, 60_000);
  }

  test('tor-exits: the newest Published/LastStatus line, not the first', async () => {
    const path = tempFeed('exit-addresses', [
      'ExitNode AAAA',
      'Published 2020-01-01 00:00:00',
      'LastStatus 2020-01-02 00:00:00',
      'ExitAddress 192.0.2.1 2020-01-02 00:00:00',
      'ExitNode BBBB',
      'Published 2020-03-01 10:00:00',
      'LastStatus 2020-02-01 00:00:00',
      'ExitAddress 192.0.2.2 2020-02-01 00:00:00',
    ]);
    const { ctx } = await runParser(await parser('tor-exits'), path, { type: 'tor-exits' });
    expect(ctx.date.at).toBe('2020-03-01T10:00:00.000Z');
  });
});

describe('source dates without one in the file', () => {
  test('the manifest date, else the file mtime', async () => {
    const path = tempFeed('bulk-exits.txt', ['192.0.2.1', '192.0.2.2']);
    const withDate = await runParser(await parser('tor-exits'), path, { type: 'tor-exits', date: '2021-06-30' });
    expect(withDate.ctx.date).toEqual({ at: '2021-06-30T00:00:00.000Z', from: 'manifest' });
    const mtime = new Date('2022-02-02T02:02:02Z');
    utimesSync(path, mtime, mtime);
    const without = await runParser(await parser('tor-exits'), path, { type: 'tor-exits' });
    expect(without.ctx.date).toEqual({ at: mtime.toISOString(), from: 'mtime' });
  });

  test('an implausible stated date is ignored (the fallback stands)', async () => {
    const path = tempFeed('old-bogons.txt', ['# last updated 0000000001 (epoch)', '0.0.0.0/8']);
    const { ctx } = await runParser(await parser('bogons'), path, { type: 'bogons', date: '2023-04-05' });
    expect(ctx.date).toEqual({ at: '2023-04-05T00:00:00.000Z', from: 'manifest' });
  });
});

describe('dates of the embedded default data', () => {
  test("geo-mmdb: the database's metadata build_epoch is its date (the fixture writer stamps 1700000000)", async () => {
    const { writeMmdb } = await import('./mmdb-writer.ts');
    const { tempFeed: tempBinary } = await import('./feed-test-kit.ts');
    const path = tempBinary('dated.mmdb', writeMmdb({ ipVersion: 4, networks: [['192.0.2.0/24', { country_code: 'US', latitude: 1, longitude: 2 }]] }));
    const { ctx } = await runParser(await parser('geo-mmdb'), path, { type: 'geo-mmdb', date: '2020-01-01' });
    expect(ctx.date).toEqual({ at: new Date(1700000000 * 1000).toISOString(), from: 'file' });
  });

  test('the data packages are dated by their version (2.3.YYYYMMDDHH), not by the day bun install ran', async () => {
    const { packageDataDate, packageSources } = await import('../../index-builder/default-sources.ts');
    expect(packageDataDate('2.3.2026061719')).toBe('2026-06-17');
    expect(packageDataDate('1.0.0')).toBeUndefined();
    for (const s of packageSources()) expect(s.options.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});
