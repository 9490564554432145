/**
 * The locations of a mapped index, one shared object per distinct location.
 *
 * Record rows carry their location inline (seven columns: string ids and two
 * f32 coordinates), and far fewer locations exist than records: about 90k
 * distinct ones answer a million uniformly random IPv4 lookups of the default
 * index, out of 200k distinct records. Decoding a row's location means five
 * string reads and an object; finding the same location's object again is
 * one hash of the columns and one compare. A bounded direct-mapped table of
 * 2^16 locations (about 2 MiB of keys plus the objects) finds 83-84 % of
 * them on random traffic (BENCHMARKS.md, index lookup). The objects are
 * frozen: every record at that location shares one.
 */
import { GEO_LAYOUT, GEO_PRESENT } from './format.ts';
import type { GeoInfo } from './record.ts';
import { ChunkedSlots, type StringReader } from './tables.ts';

const WIDTH = GEO_LAYOUT.length;

/** f32 cell as a number rounded to 4 decimals (about 10 m, the feeds' precision), null for NaN. */
export function coord(v: number): number | null {
  return Number.isNaN(v) ? null : Math.round(v * 1e4) / 1e4;
}

/** Finds or decodes the location of a record row. */
export class LocationTable {
  /** The columns of the location held in each slot (countryCode column 0: empty slot). */
  private readonly keys: Uint32Array;
  private readonly values: ChunkedSlots<GeoInfo>;
  private readonly shift: number;

  constructor(
    private readonly cells: Uint32Array,
    private readonly f32: Float32Array,
    private readonly strings: StringReader,
    bits = 16,
  ) {
    this.keys = new Uint32Array(WIDTH << bits);
    this.values = new ChunkedSlots<GeoInfo>(1 << bits);
    this.shift = 32 - bits;
  }

  /** The location whose columns start at cell `b`; null when the row has none. */
  get(b: number): GeoInfo | null {
    const c = this.cells;
    const cc = c[b];
    if (cc < GEO_PRESENT) return null;
    const region = c[b + 1];
    const city = c[b + 2];
    const postal = c[b + 3];
    const lat = c[b + 4];
    const lon = c[b + 5];
    const tz = c[b + 6];
    // Every column mixed in (two locations differing in any one must not share a slot), Fibonacci hashing at the end.
    let h = Math.imul(city ^ lat, 0x85ebca6b) ^ lon;
    h = Math.imul(h ^ (h >>> 15), 0xc2b2ae35) ^ region ^ Math.imul(tz, 0x27d4eb2f);
    h = Math.imul(h ^ (h >>> 13), 0x85ebca6b) ^ cc ^ Math.imul(postal, 0x165667b1);
    const slot = Math.imul(h ^ (h >>> 16), 0x9e3779b1) >>> this.shift;
    const k = this.keys;
    const at = slot * WIDTH;
    if (k[at] === cc && k[at + 2] === city && k[at + 4] === lat && k[at + 5] === lon && k[at + 1] === region && k[at + 3] === postal && k[at + 6] === tz) {
      return this.values.get(slot)!;
    }
    const s = this.strings;
    const geo: GeoInfo = Object.freeze({
      countryCode: s.get(cc - GEO_PRESENT),
      region: s.get(region),
      city: s.get(city),
      postalCode: s.get(postal),
      latitude: coord(this.f32[b + 4]),
      longitude: coord(this.f32[b + 5]),
      timezone: s.get(tz),
    });
    for (let i = 0; i < WIDTH; i++) k[at + i] = c[b + i];
    this.values.set(slot, geo);
    return geo;
  }
}
