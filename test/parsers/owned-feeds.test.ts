/**
 * Runs every feeds.json entry of the types these parsers own over the real
 * snapshots: each must report rows and raise no structural error.
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { FeedParser } from '../../index-builder/feed/source.ts';
import type { ManifestSource } from '../../index-builder/sink.ts';
import { FEEDS_DIR } from '../helpers/recording-sink.ts';
import { describeWithShared } from '../helpers/shared-feeds.ts';
import { runParser } from './feed-test-kit.ts';
import { parse as asnList } from '../../index-builder/parsers/asn-list.ts';
import { parse as bogons } from '../../index-builder/parsers/bogons.ts';
import { parse as cidrList } from '../../index-builder/parsers/cidr-list.ts';
import { parse as cloudAws } from '../../index-builder/parsers/cloud-aws.ts';
import { parse as cloudAzure } from '../../index-builder/parsers/cloud-azure.ts';
import { parse as cloudGcp } from '../../index-builder/parsers/cloud-gcp.ts';
import { parse as cloudOracle } from '../../index-builder/parsers/cloud-oracle.ts';
import { parse as crawlerRanges } from '../../index-builder/parsers/crawler-ranges.ts';
import { parse as icloudRelay } from '../../index-builder/parsers/icloud-relay.ts';
import { parse as providerRanges } from '../../index-builder/parsers/provider-ranges.ts';
import { parse as spamhausAsndrop } from '../../index-builder/parsers/spamhaus-asndrop.ts';
import { parse as spamhausDrop } from '../../index-builder/parsers/spamhaus-drop.ts';
import { parse as threatFeed } from '../../index-builder/parsers/threat-feed.ts';
import { parse as torExits } from '../../index-builder/parsers/tor-exits.ts';

const OWNED: Record<string, FeedParser> = {
  'crawler-ranges': crawlerRanges,
  'cloud-aws': cloudAws,
  'cloud-gcp': cloudGcp,
  'cloud-azure': cloudAzure,
  'cloud-oracle': cloudOracle,
  'cidr-list': cidrList,
  'provider-ranges': providerRanges,
  'asn-list': asnList,
  'tor-exits': torExits,
  'icloud-relay': icloudRelay,
  'spamhaus-drop': spamhausDrop,
  'spamhaus-asndrop': spamhausAsndrop,
  'threat-feed': threatFeed,
  bogons,
};

describeWithShared('every owned feeds.json entry parses', () => {
  const manifest = JSON.parse(readFileSync(resolve(FEEDS_DIR, 'feeds.json'), 'utf8')) as { sources: ManifestSource[] };
  const owned = manifest.sources.filter((s) => Object.hasOwn(OWNED, s.type));

  test('the manifest has entries of the owned types', () => {
    expect(owned.length).toBeGreaterThanOrEqual(40);
  });

  for (const source of owned) {
    test(`${source.type} ${source.path}`, async () => {
      const { ctx } = await runParser(OWNED[source.type], source.path, source); // throws FeedError on structure
      console.log(`${source.type.padEnd(16)} ${source.path.padEnd(52)} rows ${String(ctx.rows).padStart(7)}  skipped ${ctx.skipped}`);
      expect(ctx.rows).toBeGreaterThan(0);
    });
  }
});
