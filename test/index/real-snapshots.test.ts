/**
 * A build from every real snapshot in ../shared/feeds (every manifest type
 * present there) succeeds and answers known addresses as the feeds say.
 */
import { beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { IndexReader } from '../../src/index/reader.ts';
import { Flag } from '../../src/index/record.ts';
import { fullIndexPath } from '../helpers/full-index.ts';
import { describeWithShared } from '../helpers/shared-feeds.ts';

describeWithShared('a build from every real snapshot', () => {
  let reader: IndexReader;
  beforeAll(async () => {
    reader = IndexReader.open(await fullIndexPath());
  }, 300_000);

  const rec = (ip: string) => {
    const hit = reader.lookup(ip);
    if (!hit) throw new Error(`${ip} did not parse`);
    return hit.record;
  };

  describe('index built from the real snapshots', () => {
    test('every source of the manifest is recorded with rows and a sha256', () => {
      expect(reader.meta.sources.length).toBe(56);
      for (const s of reader.meta.sources) {
        expect(s.rows).toBeGreaterThan(0);
        expect(s.sha256).toMatch(/^[0-9a-f]{64}$/);
      }
      expect(new Set(reader.meta.sources.map((s) => s.type)).size).toBeGreaterThanOrEqual(16);
    });

    test('googlebot.json lists 66.249.64.0/27: an official crawler range', () => {
      const r = rec('66.249.64.5');
      expect(r.crawler).toBe('googlebot');
      expect(r.flags & Flag.CRAWLER_RANGE).toBeTruthy();
    });

    test('exit-addresses lists 171.25.193.25 as a Tor exit; its neighbour is not', () => {
      expect(rec('171.25.193.25').flags & Flag.TOR_EXIT).toBeTruthy();
      expect(rec('171.25.193.24').flags & Flag.TOR_EXIT).toBe(0);
    });

    test('DROP lists 1.10.16.0/20 (SBL256894)', () => {
      const r = rec('1.10.16.1');
      expect(r.flags & Flag.DROP).toBeTruthy();
      expect(r.threatList?.reference).toBe('SBL256894');
      expect(rec('1.10.15.255').flags & Flag.DROP).toBe(0);
    });

    test('the Feodo sidecar has 192.9.135.73 (Pikabot)', () => {
      const r = rec('192.9.135.73');
      expect(r.flags & Flag.THREAT_FEED).toBeTruthy();
      expect(r.threatFeed?.malware).toBe('Pikabot');
    });

    test('AWS publishes 3.5.140.0/22', () => {
      const r = rec('3.5.140.10');
      expect(r.provider?.name).toBe('Amazon Web Services');
      expect(r.flags & Flag.DATACENTER).toBeTruthy();
    });

    test('the relay list has 104.28.28.0/26', () => {
      expect(rec('104.28.28.1').flags & Flag.PRIVACY_RELAY).toBeTruthy();
    });

    test('RouteViews: 1.1.1.0/24 originated by AS13335; RIS: 2001:4860::/32 by AS15169', () => {
      expect(rec('1.1.1.1').route).toMatchObject({ prefix: '1.1.1.0/24', originAsn: 13335, rpkiStatus: 'unknown', originConflict: false });
      expect(rec('2001:4860:4860::8888').route?.originAsn).toBe(15169);
    });

    test('APNIC delegates 1.1.1.0/24 (AU); special-purpose and bogons are marked', () => {
      expect(rec('1.1.1.1').allocation).toMatchObject({ registry: 'apnic', countryCode: 'AU', cidr: '1.1.1.0/24' });
      expect(rec('10.1.2.3').specialUse?.kind).toBe('private');
      expect(rec('10.1.2.3').flags & Flag.BOGON).toBeTruthy();
    });

    test('ASN-DROP context and threat density per ASN', () => {
      const d = reader.asnDetails(932);
      expect(d?.asnDrop).toMatchObject({ asn: 'AS932', asName: 'XNNET', rir: 'arin', countryCode: 'US' });
      const cf = reader.asnDetails(13335)!;
      expect(cf.name).toBeTruthy();
      expect(cf.threatDensity.totalIpv4Addresses).toBeGreaterThan(1_000_000);
    });
  });
});
