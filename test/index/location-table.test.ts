/**
 * LocationTable: every row reads its own location, whatever shares its slot;
 * rows at the same location share one frozen object; rows without one read
 * null.
 */
import { expect, test } from 'bun:test';
import { GEO_LAYOUT, GEO_PRESENT } from '../../src/index/format.ts';
import { LocationTable } from '../../src/index/location-table.ts';
import type { GeoInfo } from '../../src/index/record.ts';
import { StringReader } from '../../src/index/tables.ts';
import { prng } from '../helpers/prng.ts';

const WIDTH = GEO_LAYOUT.length;
const texts = ['', 'US', 'DE', 'California', 'Bavaria', 'San José', 'München', '94016', 'America/Los_Angeles', 'Europe/Berlin'];
const strings = (() => {
  const encoded = texts.map((t) => new TextEncoder().encode(t));
  const offsets = new Uint32Array(encoded.length + 1);
  encoded.forEach((e, i) => (offsets[i + 1] = offsets[i] + e.length));
  const bytes = new Uint8Array(offsets[encoded.length]);
  encoded.forEach((e, i) => bytes.set(e, offsets[i]));
  return new StringReader(offsets, bytes);
})();
const id = (t: string) => texts.indexOf(t);

/** Rows of seven location columns: random locations (some absent), the expected GeoInfo of each. */
function rows(n: number, seed: number): { cells: Uint32Array; f32: Float32Array; expected: (GeoInfo | null)[] } {
  const rnd = prng(seed);
  const cells = new Uint32Array(n * WIDTH);
  const f32 = new Float32Array(cells.buffer);
  const expected: (GeoInfo | null)[] = [];
  const pick = (...xs: string[]) => xs[Math.floor(rnd() * xs.length)];
  for (let r = 0; r < n; r++) {
    const b = r * WIDTH;
    if (rnd() < 0.1) {
      expected.push(null); // no location: the countryCode column lacks GEO_PRESENT
      continue;
    }
    const cc = pick('US', 'DE', '');
    const region = pick('California', 'Bavaria', '');
    const city = pick('San José', 'München', '');
    const postal = pick('94016', '');
    const tz = pick('America/Los_Angeles', 'Europe/Berlin', '');
    // A few coordinates only, so locations repeat across rows; NaN is "none".
    const lat = [37.7749, 48.1372, Number.NaN][Math.floor(rnd() * 3)];
    const lon = [-122.4194, 11.5755][Math.floor(rnd() * 2)];
    cells.set([GEO_PRESENT + id(cc), id(region), id(city), id(postal)], b);
    f32[b + 4] = lat;
    f32[b + 5] = lon;
    cells[b + 6] = id(tz);
    const text = (t: string) => (t === '' ? null : t);
    const coord = (v: number) => (Number.isNaN(v) ? null : Math.round(Math.fround(v) * 1e4) / 1e4);
    expected.push({ countryCode: text(cc), region: text(region), city: text(city), postalCode: text(postal), latitude: coord(lat), longitude: coord(lon), timezone: text(tz) });
  }
  return { cells, f32, expected };
}

test('every row reads its own location in a table far smaller than the locations (slots shared, read in random order)', () => {
  const { cells, f32, expected } = rows(5000, 1);
  const table = new LocationTable(cells, f32, strings, 3);
  const rnd = prng(2);
  for (let k = 0; k < 40_000; k++) {
    const r = Math.floor(rnd() * expected.length);
    expect(table.get(r * WIDTH)).toEqual(expected[r]);
  }
});

test('rows at one location share one frozen object (unless another location took its slot); rows without one read null', () => {
  const { cells, f32, expected } = rows(2000, 3);
  const table = new LocationTable(cells, f32, strings);
  const byText = new Map<string, GeoInfo>();
  let again = 0;
  let shared = 0;
  expected.forEach((e, r) => {
    const got = table.get(r * WIDTH);
    if (e === null) return expect(got).toBeNull();
    expect(Object.isFrozen(got)).toBe(true);
    expect(table.get(r * WIDTH)).toBe(got!); // read again at once: the same object
    const key = JSON.stringify(e);
    const seen = byText.get(key);
    if (seen) {
      again++;
      if (got === seen) shared++;
    } else byText.set(key, got!);
  });
  // Under 1 000 locations in 2^16 slots: a handful share a slot and evict each other.
  expect(again).toBeGreaterThan(500);
  expect(shared / again).toBeGreaterThan(0.9);
});
