/**
 * META records, per source, its date (and where it came from) and the
 * evidence kinds it provides, derived from its type and `category`; the
 * capabilities follow from those kinds, not from the type alone.
 */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { loadManifest, ManifestError } from '../../index-builder/manifest.ts';
import { kindsOfSource } from '../../src/index/evidence-kinds.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'coverage-meta-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('evidence kinds of a source', () => {
  test('by type, and by category where the type has one', () => {
    expect(kindsOfSource('cidr-list', 'content')).toEqual(['datacenter']);
    expect(kindsOfSource('cidr-list', 'vpn')).toEqual(['vpn']);
    expect(kindsOfSource('cidr-list', 'privacy_relay')).toEqual(['relays']);
    expect(kindsOfSource('cidr-list', 'threat')).toEqual(['threat']);
    expect(kindsOfSource('asn-list', 'mobile')).toEqual(['network_type']);
    // A provider's geofeed locates only its own ranges: no geolocation coverage.
    expect(kindsOfSource('geofeed', undefined)).toEqual([]);
    expect(kindsOfSource('geofeed', 'datacenter')).toEqual(['datacenter']);
    expect(kindsOfSource('geo-mmdb', undefined)).toEqual(['geolocation']);
    expect(kindsOfSource('pfx2as', undefined)).toEqual(['asn', 'routing']);
    expect(kindsOfSource('peeringdb-net', undefined)).toEqual(['network_type']);
    // A category on a type that has none changes nothing.
    expect(kindsOfSource('tor-exits', 'vpn')).toEqual(['tor']);
  });
});

describe('META of a build', () => {
  test('a content CIDR list makes no VPN, relay or threat capability; dates and their origins are kept', async () => {
    await Bun.write(join(dir, 'cdn.txt'), '192.0.2.0/24\n');
    await Bun.write(join(dir, 'bulk-exits.txt'), '198.51.100.7\n');
    await Bun.write(
      join(dir, 'feeds.json'),
      JSON.stringify({
        sources: [
          { type: 'cidr-list', category: 'content', provider: 'Some CDN', path: 'cdn.txt', date: '2026-01-02' },
          { type: 'tor-exits', path: 'bulk-exits.txt' },
          { type: 'bogons', path: join(FIXTURE_FEEDS_DIR, 'bogons/fullbogons-ipv4.txt') },
        ],
      }),
    );
    const out = join(dir, 'x.idx');
    await buildIndex({ sources: loadManifest(join(dir, 'feeds.json')), out, quiet: true });
    const meta = IndexReader.open(out).meta;
    expect(meta.capabilities).toMatchObject({ datacenter: true, vpn: false, relays: false, threat: false, tor: true, bogons: true, allocation: true, routing: false, network_type: false });
    const [cdn, tor, bogons] = meta.sources;
    expect([cdn.kinds, cdn.date, cdn.dateFrom]).toEqual([['datacenter'], '2026-01-02T00:00:00.000Z', 'manifest']);
    expect([tor.kinds, tor.dateFrom]).toEqual([['tor'], 'mtime']);
    expect([bogons.kinds, bogons.date, bogons.dateFrom]).toEqual([['bogons'], '2024-03-10T16:55:01.000Z', 'file']);
  }, 120_000);

  test('a manifest date that is not YYYY-MM-DD is refused with the entry', async () => {
    await Bun.write(join(dir, 'a.txt'), '192.0.2.0/24\n');
    for (const date of ['2026-13-01', '01/02/2026', 20260102]) {
      await Bun.write(join(dir, 'bad.json'), JSON.stringify({ sources: [{ type: 'tor-exits', path: 'a.txt', date }] }));
      expect(() => loadManifest(join(dir, 'bad.json'))).toThrow(ManifestError);
      expect(() => loadManifest(join(dir, 'bad.json'))).toThrow('sources[0]: "date" must be a YYYY-MM-DD date');
    }
  });
});
