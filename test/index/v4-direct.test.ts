/**
 * The format-3 IPv4 direct table (one entry per /24, buckets for split /24s)
 * and inline geolocation, on hand-made layouts where the edge cases sit:
 * a /24 cut into 256 single addresses, an interval starting exactly on the
 * next /24, the very last /24, and a location whose every field is empty.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { Collector } from '../../index-builder/merge/collector.ts';
import type { IndexReader } from '../../src/index/reader.ts';
import { formatIPv4, parseIPv4 } from '../../src/net/ip.ts';
import { openCollected } from '../helpers/collected-index.ts';

const v4 = (s: string) => parseIPv4(s);
let reader: IndexReader;
let remove: () => void;

beforeAll(() => {
  const c = new Collector();
  // 20.0.0.0/24: every address its own city (256 intervals in one /24).
  for (let i = 0; i < 256; i++) c.geo(4, v4('20.0.0.0') + i, v4('20.0.0.0') + i, { city: `c${i % 2 === 0 ? i : i - 1}x${i}`, countryCode: 'AA' });
  // 30.0.0.128 - 30.0.1.255: starts inside one /24 and ends on the next's last address.
  c.geo(4, v4('30.0.0.128'), v4('30.0.1.255'), { city: 'half', countryCode: 'BB' });
  // 30.0.2.0/24 starts exactly on a /24 (no bucket needed for 30.0.1.x or 30.0.2.x).
  c.geo(4, v4('30.0.2.0'), v4('30.0.2.255'), { city: 'whole', countryCode: 'CC' });
  // The last /24 of the space, split at .200.
  c.geo(4, v4('255.255.255.200'), v4('255.255.255.255'), { city: 'top', countryCode: 'DD' });
  // A location with no fields at all is still a location.
  c.geo(4, v4('40.0.0.0'), v4('40.0.0.255'), {});
  ({ reader, remove } = openCollected(c, 'v4direct'));
});
afterAll(() => remove());

const city = (ip: string) => reader.lookup(ip)!.record.geo?.city ?? null;

describe('IPv4 direct table', () => {
  test('a /24 of 256 one-address intervals answers each address with its own record and range', () => {
    for (let i = 0; i < 256; i++) {
      const ip = formatIPv4(v4('20.0.0.0') + i);
      const hit = reader.lookup(ip)!;
      expect(hit.record.geo?.city).toBe(`c${i % 2 === 0 ? i : i - 1}x${i}`);
      expect([hit.rangeStart, hit.rangeEnd]).toEqual([ip, ip]);
      expect(reader.recordIdOf(ip)).toBe(hit.recordId);
    }
    expect(city('19.255.255.255')).toBeNull();
    expect(city('20.0.1.0')).toBeNull();
  });

  test('intervals that start inside a /24 or exactly on one', () => {
    expect(city('30.0.0.127')).toBeNull();
    expect(city('30.0.0.128')).toBe('half');
    expect(city('30.0.1.0')).toBe('half');
    expect(city('30.0.1.255')).toBe('half');
    expect(city('30.0.2.0')).toBe('whole');
    expect(city('30.0.3.0')).toBeNull();
    const hit = reader.lookup('30.0.1.7')!;
    expect([hit.rangeStart, hit.rangeEnd]).toEqual(['30.0.0.128', '30.0.1.255']);
  });

  test('the last /24 of the space, and IPv4-mapped text reaching it', () => {
    expect(city('255.255.255.199')).toBeNull();
    expect(city('255.255.255.200')).toBe('top');
    expect(city('255.255.255.255')).toBe('top');
    const hit = reader.lookup('::ffff:255.255.255.255')!;
    expect(hit.family).toBe(4);
    expect(hit.ip).toBe('255.255.255.255');
    expect([hit.rangeStart, hit.rangeEnd]).toEqual(['255.255.255.200', '255.255.255.255']);
  });

  test('an empty location is an object of nulls, no location is null', () => {
    expect(reader.lookup('40.0.0.9')!.record.geo).toEqual({
      countryCode: null,
      region: null,
      city: null,
      postalCode: null,
      latitude: null,
      longitude: null,
      timezone: null,
    });
    expect(reader.lookup('40.0.1.9')!.record.geo).toBeNull();
  });
});
