/**
 * The merger and the mapped reader against a naive reference: a linear scan
 * over the source rows where the smallest covering range wins (the later
 * row on ties) and flag layers are unions; a cloud's claim names the
 * operator over a service's claim, which then shows as the service.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Collector } from '../../index-builder/merge/collector.ts';
import { writeCollected } from '../../index-builder/build.ts';
import { addBuiltins } from '../../index-builder/builtins.ts';
import { IndexReader } from '../../src/index/reader.ts';
import { Flag } from '../../src/index/record.ts';
import { formatIPv4, formatIPv6, parseIPv4, parseIPv6, type Addr, type Family } from '../../src/net/ip.ts';
import { prng } from '../helpers/prng.ts';

type Row = { family: Family; start: Addr; end: Addr; layer: 'geo' | 'provider' | 'infra' | 'crawler' | 'tor' | 'bogon'; value: string };

const rand = prng(20261122);
const rows: Row[] = [];
const collector = new Collector();
addBuiltins(collector);

/** A random range inside a small window so that ranges overlap often. */
function randomV4Range(): [number, number] {
  const base = 0x0a000000 + Math.floor(rand() * 4) * 0x01000000; // 10.x-13.x
  const len = 8 + Math.floor(rand() * 25); // /8../32
  const size = 2 ** (32 - len);
  const start = base + Math.floor((rand() * 0x01000000) / size) * size;
  if (rand() < 0.3) {
    // an arbitrary (non-CIDR) range, as CSV feeds publish
    const s = base + Math.floor(rand() * 0x00ffffff);
    return [s, Math.min(base + 0x00ffffff, s + Math.floor(rand() * 70000))];
  }
  return [start, Math.min(start + size - 1, 0xffffffff)];
}
function randomV6Range(): [bigint, bigint] {
  const base = 0x20010db8n << 96n;
  const len = 32 + Math.floor(rand() * 97);
  const host = 128n - BigInt(len);
  const offset = BigInt(Math.floor(rand() * 2 ** 30)) << 66n;
  const start = ((base + offset) >> host) << host;
  return [start, start + (1n << host) - 1n];
}

const LAYERS: Row['layer'][] = ['geo', 'provider', 'infra', 'crawler', 'tor', 'bogon'];
// A named list is a service claim; a cloud's ranges are the infrastructure holder's (index-builder/merge/precedence.ts).
const SERVICE_SOURCE = { type: 'cidr-list', category: 'datacenter', provider: 'a service', path: 'service.txt' };
const CLOUD_SOURCE = { type: 'cloud-aws', path: 'cloud.json' };
// Locations from a third-party database (a holder's own would outrank it: test/builder/publisher-location.test.ts).
const GEO_SOURCE = { type: 'geo-csv', path: 'geo.csv' };
for (let i = 0; i < 400; i++) {
  const family: Family = i % 3 === 0 ? 6 : 4;
  const [start, end] = family === 4 ? randomV4Range() : randomV6Range();
  const layer = LAYERS[Math.floor(rand() * LAYERS.length)];
  const value = `${layer}-${Math.floor(rand() * 40)}`;
  rows.push({ family, start, end, layer, value });
  if (layer === 'geo') {
    collector.beginSource(GEO_SOURCE);
    collector.geo(family, start, end, { city: value, countryCode: 'ZZ' });
  } else if (layer === 'provider' || layer === 'infra') {
    collector.beginSource(layer === 'infra' ? CLOUD_SOURCE : SERVICE_SOURCE);
    collector.provider(family, start, end, { category: 'datacenter', provider: value });
  }
  else if (layer === 'crawler') collector.crawler(family, start, end, value);
  else if (layer === 'tor') collector.torExit(family, start, end);
  else collector.bogon(family, start, end);
}

/** The reference answer for one address. */
function reference(family: Family, x: Addr) {
  const best: Record<string, Row | undefined> = {};
  let flags = 0;
  for (const r of rows) {
    if (r.family !== family || x < r.start || x > r.end) continue;
    if (r.layer === 'tor') flags |= Flag.TOR_EXIT;
    if (r.layer === 'bogon') flags |= Flag.BOGON;
    if (r.layer === 'crawler') flags |= Flag.CRAWLER_RANGE;
    if (r.layer === 'provider' || r.layer === 'infra') flags |= Flag.DATACENTER;
    const cur = best[r.layer];
    const sz = family === 4 ? (r.end as number) - (r.start as number) : Number((r.end as bigint) - (r.start as bigint));
    const curSz = cur ? (family === 4 ? (cur.end as number) - (cur.start as number) : Number((cur.end as bigint) - (cur.start as bigint))) : Infinity;
    if (!cur || sz <= curSz) best[r.layer] = r; // later rows win ties
  }
  // The holder of the space is the operator; a service claim inside it shows as the service.
  const tenant = best.infra && best.provider && best.provider.value !== best.infra.value ? best.provider.value : null;
  return {
    city: best.geo?.value ?? null,
    provider: best.infra?.value ?? best.provider?.value ?? null,
    service: tenant,
    crawler: best.crawler?.value ?? null,
    flags,
  };
}

const CHECKED = Flag.TOR_EXIT | Flag.BOGON | Flag.CRAWLER_RANGE | Flag.DATACENTER;
let dir: string;
let reader: IndexReader;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ipintel-merge-'));
  writeCollected(collector, [], { out: join(dir, 'fixture.idx'), attributions: [] });
  reader = IndexReader.open(join(dir, 'fixture.idx'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function check(family: Family, x: Addr) {
  const text = family === 4 ? formatIPv4(x as number) : formatIPv6(x as bigint);
  const hit = reader.lookup(text);
  expect(hit).not.toBeNull();
  const ref = reference(family, x);
  const got = {
    city: hit!.record.geo?.city ?? null,
    provider: hit!.record.provider?.name ?? null,
    service: hit!.record.provider?.service ?? null,
    crawler: hit!.record.crawler,
    flags: hit!.record.flags & CHECKED,
  };
  if (got.city !== ref.city || got.provider !== ref.provider || got.service !== ref.service || got.crawler !== ref.crawler || got.flags !== ref.flags) {
    throw new Error(`${text}: got ${JSON.stringify(got)}, expected ${JSON.stringify(ref)}`);
  }
  if (checkBounds) {
    // The reported interval contains the address.
    const lo = family === 4 ? parseIPv4(hit!.rangeStart) : parseIPv6(hit!.rangeStart)!;
    const hi = family === 4 ? parseIPv4(hit!.rangeEnd) : parseIPv6(hit!.rangeEnd)!;
    if (!(lo <= x && x <= hi)) throw new Error(`${text} outside its interval ${hit!.rangeStart} - ${hit!.rangeEnd}`);
  }
}
let checkBounds = false;

describe('merger + reader vs naive reference', () => {
  test('every range boundary: first, last, one before, one after', () => {
    let n = 0;
    checkBounds = true;
    for (const r of rows) {
      const one = r.family === 4 ? 1 : 1n;
      const max = r.family === 4 ? 0xffffffff : (1n << 128n) - 1n;
      for (const x of [r.start, r.end, (r.start as any) - (one as any), (r.end as any) + (one as any)]) {
        if (x < (r.family === 4 ? 0 : 0n) || x > max) continue;
        check(r.family, x);
        n++;
      }
    }
    checkBounds = false;
    expect(n).toBeGreaterThan(1500);
  });

  test('100,000 random IPv4 addresses', () => {
    for (let i = 0; i < 100_000; i++) {
      const x = rand() < 0.9 ? 0x0a000000 + Math.floor(rand() * 0x04000000) : Math.floor(rand() * 2 ** 32);
      check(4, x);
    }
  });

  test('100,000 random IPv6 addresses', () => {
    for (let i = 0; i < 100_000; i++) {
      const x =
        rand() < 0.9
          ? (0x20010db8n << 96n) + (BigInt(Math.floor(rand() * 2 ** 30)) << 66n) + BigInt(Math.floor(rand() * 2 ** 40))
          : BigInt(Math.floor(rand() * 2 ** 32)) << 96n;
      check(6, x);
    }
  });

  test('IPv4-mapped and IPv4-compatible IPv6 are answered from IPv4', () => {
    const r = rows.find((x) => x.family === 4 && x.layer === 'geo')!;
    const v4 = formatIPv4(r.start as number);
    const plain = reader.lookup(v4)!;
    const mapped = reader.lookup(`::ffff:${v4}`)!;
    expect(mapped.family).toBe(4);
    expect(mapped.ip).toBe(v4);
    expect(mapped.recordId).toBe(plain.recordId);
    const hex = reader.lookup(`::ffff:${((r.start as number) >>> 16).toString(16)}:${((r.start as number) & 0xffff).toString(16)}`)!;
    expect(hex.recordId).toBe(plain.recordId);
    expect(reader.lookup(`::${v4}`)!.recordId).toBe(plain.recordId);
    expect(reader.lookup('::1')!.family).toBe(6);
  });

  test('invalid text gives null', () => {
    for (const bad of ['', '1.2.3', '1.2.3.256', '01.2.3.4', '1.2.3.4.5', 'gggg::', '1:2:3:4:5:6:7:8:9', ':::', 'fe80::1%eth0', ' 1.2.3.4']) {
      expect(reader.lookup(bad)).toBeNull();
    }
  });

  test('special-purpose blocks are built in', () => {
    const hit = reader.lookup('192.168.1.1')!;
    expect(hit.record.specialUse?.kind).toBe('private');
    expect(hit.record.flags & Flag.SPECIAL_USE).toBeTruthy();
    expect(reader.lookup('2001:db8::1')!.record.specialUse?.kind).toBe('documentation');
    // Documentation space is IANA's, though IANA lists the /23 around it as APNIC's.
    expect(reader.lookup('2001:db8::1')!.record.allocation).toMatchObject({ registry: 'iana', status: 'reserved', cidr: '2001:db8::/32' });
    expect(reader.lookup('2001:c00::1')!.record.allocation?.registry).toBe('apnic');
    expect(reader.lookup('8.8.8.8')!.record.allocation?.registry).toBe('arin');
  });
});
