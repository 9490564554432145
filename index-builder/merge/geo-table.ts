/**
 * Deduplicated locations as u32 rows instead of objects: strings interned
 * locally (a city name is held once, not once per location), coordinates as
 * float bits. A database of half a million locations costs a few typed
 * columns and its distinct strings.
 */
import { GEO_LAYOUT } from '../../src/index/format.ts';
import type { GeoValue } from '../sink.ts';
import { GrowableU32 } from './growable.ts';
import { RowSet } from './row-set.ts';
import type { StringTable } from './value-table.ts';

// Key row: four strings, latitude and longitude as f64 words, time zone, which coordinates are present.
const KEY_WIDTH = 10;
const scratch = new DataView(new ArrayBuffer(8));
const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** Locations by id; id 0 is reserved for "none". */
export class GeoTable {
  private readonly keys = new RowSet(KEY_WIDTH);
  /** Per id: latitude and longitude as f32 bits, as first reported (NaN when absent). */
  private readonly coordinates = new GrowableU32(1 << 16);
  private readonly stringIds = new Map<string, number>([['', 0]]);
  private readonly strings: string[] = [''];
  private readonly row = new Array<number>(KEY_WIDTH).fill(0);
  /** The last values reported and their ids: parsers report one object for many ranges. */
  private memo = new Map<GeoValue, number>();

  constructor() {
    // Id 0: a key no location produces (presence bits beyond the two used).
    this.keys.idOf(new Array<number>(KEY_WIDTH).fill(0xffffffff));
    this.coordinates.push(0);
    this.coordinates.push(0);
  }

  /** Number of ids including the reserved 0. */
  get size(): number {
    return this.keys.size;
  }

  /** The id of a location, adding it when new; equal locations get one id. */
  intern(v: GeoValue): number {
    let id = this.memo.get(v);
    if (id !== undefined) return id;
    const row = this.row;
    row[0] = this.stringId(v.countryCode);
    row[1] = this.stringId(v.region);
    row[2] = this.stringId(v.city);
    row[3] = this.stringId(v.postalCode);
    // Coordinates compare as numbers (0 and -0 are one location, as their text is).
    const present = (v.latitude === undefined ? 0 : 1) | (v.longitude === undefined ? 0 : 2);
    setF64(row, 4, v.latitude);
    setF64(row, 6, v.longitude);
    row[8] = this.stringId(v.timezone);
    row[9] = present;
    const before = this.keys.size;
    id = this.keys.idOf(row);
    if (id === before) {
      this.coordinates.push(f32BitsOf(v.latitude));
      this.coordinates.push(f32BitsOf(v.longitude));
    }
    this.memo.set(v, id);
    return id;
  }

  /** The named parts of a location (country, region, city) by id, for precedence; undefined for 0. */
  get(id: number | undefined): GeoValue | undefined {
    if (!id || id >= this.size) return undefined;
    const rows = this.keys.rows;
    const k = id * KEY_WIDTH;
    const named = (lid: number) => this.strings[lid] || undefined;
    return { countryCode: named(rows.at(k)), region: named(rows.at(k + 1)), city: named(rows.at(k + 2)) };
  }

  /** Forgets which objects were reported (a source's values go with its parser). */
  forgetValues(): void {
    this.memo = new Map();
  }

  /**
   * The GEO_LAYOUT rows (row 0 empty) with strings interned in `strings` in
   * id order, column by column: the order a table of the values would use.
   */
  encode(strings: StringTable): Uint32Array {
    const g = GEO_LAYOUT.length;
    const n = this.size;
    const out = new Uint32Array(n * g);
    const rows = this.keys.rows;
    const local = new Uint32Array(this.strings.length).fill(0xffffffff);
    const id = (lid: number): number => {
      let v = local[lid];
      if (v === 0xffffffff) v = local[lid] = strings.id(this.strings[lid]);
      return v;
    };
    out[4] = out[5] = NAN_BITS;
    for (let r = 1; r < n; r++) {
      const k = r * KEY_WIDTH;
      const o = r * g;
      out[o] = id(rows.at(k));
      out[o + 1] = id(rows.at(k + 1));
      out[o + 2] = id(rows.at(k + 2));
      out[o + 3] = id(rows.at(k + 3));
      out[o + 4] = this.coordinates.at(2 * r);
      out[o + 5] = this.coordinates.at(2 * r + 1);
      out[o + 6] = id(rows.at(k + 8));
    }
    return out;
  }

  private stringId(s: string | undefined): number {
    if (s === undefined || s === '') return 0;
    let id = this.stringIds.get(s);
    if (id === undefined) {
      id = this.strings.length;
      this.strings.push(s);
      this.stringIds.set(s, id);
    }
    return id;
  }
}

function setF64(row: number[], at: number, v: number | undefined): void {
  scratch.setFloat64(0, v === undefined || v === 0 ? 0 : v);
  row[at] = scratch.getUint32(0);
  row[at + 1] = scratch.getUint32(4);
}

f32[0] = NaN;
const NAN_BITS = f32Bits[0];

function f32BitsOf(v: number | undefined): number {
  f32[0] = typeof v === 'number' && Number.isFinite(v) ? v : NaN;
  return f32Bits[0];
}
