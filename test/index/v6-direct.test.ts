/**
 * The format-4 IPv6 path (/32 hash, per-/32 direct tables, forward scan)
 * on hand-made layouts: a /32 with hundreds of starts packed into one /48
 * (one node entry covers them all, so the scan gallops), parts of a /32 that
 * lie inside one interval, /32s with no starts (the first-level fallback),
 * and the ends of the address space.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { Collector } from '../../index-builder/merge/collector.ts';
import type { IndexReader } from '../../src/index/reader.ts';
import { formatIPv6, parseIPv6 } from '../../src/net/ip.ts';
import { openCollected } from '../helpers/collected-index.ts';

const v6 = (s: string) => parseIPv6(s)!;
let reader: IndexReader;
let remove: () => void;
const DENSE = 600;

beforeAll(() => {
  const c = new Collector();
  // 2001:db8:5:: /48 cut into DENSE /64s with their own city each, then a /40 around them.
  c.geo(6, v6('2001:db8::'), v6('2001:db8:ff:ffff:ffff:ffff:ffff:ffff'), { city: 'wide', countryCode: 'AA' });
  for (let i = 0; i < DENSE; i++) {
    const start = v6('2001:db8:5::') + (BigInt(i) << 64n);
    c.geo(6, start, start + (1n << 64n) - 1n, { city: `n${i}`, countryCode: 'AA' });
  }
  // Two dense /48s in adjacent parts of one /32 (2001:dba::/32 gets s = 11 bits: parts of /43): the
  // scan in the first part is bounded by the second part's entry, which names an interval.
  for (const at of ['2001:dba:5::', '2001:dba:25::']) {
    for (let i = 0; i < DENSE / 2; i++) {
      const start = v6(at) + (BigInt(i) << 64n);
      c.geo(6, start, start + (1n << 64n) - 1n, { city: `${at}${i}`, countryCode: 'AB' });
    }
  }
  // A /32 with one interval starting mid-way (a small node).
  c.geo(6, v6('2400:cb00:8000::'), v6('2400:cb00:ffff:ffff:ffff:ffff:ffff:ffff'), { city: 'upper-half', countryCode: 'BB' });
  // A range spanning many /32s: most of them hold no start (the fallback path).
  c.geo(6, v6('2a00:1000::'), v6('2a00:1fff:ffff:ffff:ffff:ffff:ffff:ffff'), { city: 'span', countryCode: 'CC' });
  // The very last address.
  c.geo(6, v6('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'), v6('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'), { city: 'last', countryCode: 'DD' });
  ({ reader, remove } = openCollected(c, 'v6direct'));
});
afterAll(() => remove());

const city = (ip: string) => reader.lookup(ip)!.record.geo?.city ?? null;

describe('IPv6 /32 hash and direct tables', () => {
  test('hundreds of starts under one node entry: each /64 and its neighbours', () => {
    for (let i = 0; i < DENSE; i++) {
      const start = v6('2001:db8:5::') + (BigInt(i) << 64n);
      for (const x of [start, start + 12345n, start + (1n << 64n) - 1n]) {
        const hit = reader.lookup(formatIPv6(x))!;
        expect(hit.record.geo?.city).toBe(`n${i}`);
        expect(reader.recordIdOf(formatIPv6(x))).toBe(hit.recordId);
      }
    }
    expect(city('2001:db8:4:ffff:ffff:ffff:ffff:ffff')).toBe('wide');
    expect(city(formatIPv6(v6('2001:db8:5::') + (BigInt(DENSE) << 64n)))).toBe('wide');
    expect(city('2001:db8:ff::1')).toBe('wide');
    expect(city('2001:db7:ffff::1')).toBeNull();
    expect(city('2001:db8:100::')).toBeNull();
    const hit = reader.lookup('2001:db8:5:7:1::')!;
    expect([hit.rangeStart, hit.rangeEnd]).toEqual(['2001:db8:5:7::', '2001:db8:5:7:ffff:ffff:ffff:ffff']);
  });

  test('dense neighbouring parts: the scan bounded by the next part, each /64 and its neighbours', () => {
    for (const at of ['2001:dba:5::', '2001:dba:25::']) {
      for (let i = 0; i < DENSE / 2; i++) {
        const start = v6(at) + (BigInt(i) << 64n);
        for (const x of [start, start + 987654321n, start + (1n << 64n) - 1n]) {
          const hit = reader.lookup(formatIPv6(x))!;
          expect(hit.record.geo?.city).toBe(`${at}${i}`);
          expect(reader.recordIdOf(formatIPv6(x))).toBe(hit.recordId);
        }
      }
      expect(city(formatIPv6(v6(at) + (BigInt(DENSE / 2) << 64n)))).toBeNull();
      expect(city(formatIPv6(v6(at) - 1n))).toBeNull();
    }
    const hit = reader.lookup('2001:dba:25:9:ab::')!;
    expect([hit.rangeStart, hit.rangeEnd]).toEqual(['2001:dba:25:9::', '2001:dba:25:9:ffff:ffff:ffff:ffff']);
  });

  test('a /32 split once, and /32s without any start', () => {
    expect(city('2400:cb00::1')).toBeNull();
    expect(city('2400:cb00:7fff:ffff:ffff:ffff:ffff:ffff')).toBeNull();
    expect(city('2400:cb00:8000::')).toBe('upper-half');
    expect(city('2400:cb00:ffff::1')).toBe('upper-half');
    expect(city('2400:cb01::')).toBeNull();
    for (const ip of ['2a00:1000::', '2a00:1234:5678::9', '2a00:1fff:ffff:ffff:ffff:ffff:ffff:ffff']) expect(city(ip)).toBe('span');
    expect(city('2a00:2000::')).toBeNull();
    const hit = reader.lookup('2a00:1abc::1')!;
    expect([hit.rangeStart, hit.rangeEnd]).toEqual(['2a00:1000::', '2a00:1fff:ffff:ffff:ffff:ffff:ffff:ffff']);
  });

  test('the ends of the space', () => {
    expect(city('ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe')).toBeNull();
    expect(city('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).toBe('last');
    expect(reader.lookup('::')!.record.geo).toBeNull();
    expect(reader.lookup('::1')!.family).toBe(6);
    expect(reader.lookup('2001:db8:5::')!.ip).toBe('2001:db8:5::');
  });
});
