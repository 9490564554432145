/**
 * On the index built from every real snapshot (which holds no network-type
 * source), addresses no list describes get no usage: anycast resolvers and
 * a corporate network are not "residential" by elimination.
 */
import { beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { IndexReader } from '../../src/index/reader.ts';
import { DEFAULT_POLICY, assessRecord } from '../../src/scoring/index.ts';
import { fullIndexPath } from '../helpers/full-index.ts';
import { describeWithShared } from '../helpers/shared-feeds.ts';

describeWithShared('no guessed usage on the full real index', () => {
  let reader: IndexReader;
  beforeAll(async () => {
    reader = IndexReader.open(await fullIndexPath());
  }, 300_000);

  test.each([
    ['1.1.1.1', 'Cloudflare anycast DNS resolver'],
    ['9.9.9.9', 'Quad9 anycast DNS resolver'],
    ['208.67.222.222', 'OpenDNS anycast DNS resolver'],
    ['17.0.0.1', "Apple's corporate network"],
  ])('%s (%s) is not called residential', (ip) => {
    const hit = reader.lookup(ip)!;
    expect(hit.record.asn).not.toBeNull();
    const a = assessRecord(hit.record, { verifiedCrawler: null }, DEFAULT_POLICY);
    expect(a.classification.usage_type).toBe('unknown');
    expect(a.network.category).toBeNull();
    expect(a.network.operator_type).toBeNull();
    expect(a.decision.profile).toBe('unknown');
    expect(a.classification.confidence).toBe('low');
    // Not knowing the type is no reason to hold the address back.
    expect(a.decision.action).toBe('allow');
  });
});
