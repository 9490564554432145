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
import { StringTable } from './value-table.ts';
import type { StringIds } from './string-pool.ts';

// Key row: four strings, latitude and longitude as f64 words, time zone, which coordinates are present.
const KEY_WIDTH = 10;
const scratch = new DataView(new ArrayBuffer(8));
const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** Locations by id; id 0 is reserved for "none". */
export class GeoTable {
  private keys: RowSet | undefined = new RowSet(KEY_WIDTH);
  /** Per id: latitude and longitude as f32 bits, as first reported (NaN when absent). */
  private readonly coordinates = new GrowableU32(1 << 16);
  /** Local string ids (0: empty); the map goes at seal, the list stays for encode. */
  private readonly localStrings = new StringTable();
  /** After seal: per id the GEO_LAYOUT row with local string ids (the dedup keys let go). */
  private sealed: Uint32Array | undefined;
  private readonly row = new Array<number>(KEY_WIDTH).fill(0);
  /** The last values reported and their ids: parsers report one object for many ranges. */
  private memo = new Map<GeoValue, number>();

  constructor() {
    // Id 0: a key no location produces (presence bits beyond the two used).
    this.keys!.idOf(new Array<number>(KEY_WIDTH).fill(0xffffffff));
    this.coordinates.push(0);
    this.coordinates.push(0);
  }

  /** Number of ids including the reserved 0. */
  get size(): number {
    return this.keys ? this.keys.size : this.sealed!.length / GEO_LAYOUT.length;
  }

  /** The id of a location, adding it when new; equal locations get one id. */
  intern(v: GeoValue): number {
    let id = this.memo.get(v);
    if (id !== undefined) return id;
    const keys = this.keys;
    if (!keys) throw new Error('GeoTable: intern after seal');
    const row = this.row;
    const local = this.localStrings;
    row[0] = local.id(v.countryCode);
    row[1] = local.id(v.region);
    row[2] = local.id(v.city);
    row[3] = local.id(v.postalCode);
    // Coordinates compare as numbers (0 and -0 are one location, as their text is).
    const present = (v.latitude === undefined ? 0 : 1) | (v.longitude === undefined ? 0 : 2);
    setF64(row, 4, v.latitude);
    setF64(row, 6, v.longitude);
    row[8] = local.id(v.timezone);
    row[9] = present;
    const before = keys.size;
    id = keys.idOf(row);
    if (id === before) {
      this.coordinates.push(f32BitsOf(v.latitude));
      this.coordinates.push(f32BitsOf(v.longitude));
    }
    this.memo.set(v, id);
    return id;
  }

  /**
   * Ends interning: each location becomes its GEO_LAYOUT row (local string
   * ids) and the deduplication keys are let go before the sweep allocates.
   */
  seal(): void {
    const keys = this.keys;
    if (!keys) return;
    const g = GEO_LAYOUT.length;
    const n = keys.size;
    const rows = keys.rows;
    const out = new Uint32Array(n * g);
    for (let r = 1; r < n; r++) {
      const k = r * KEY_WIDTH;
      const o = r * g;
      out[o] = rows.at(k);
      out[o + 1] = rows.at(k + 1);
      out[o + 2] = rows.at(k + 2);
      out[o + 3] = rows.at(k + 3);
      out[o + 4] = this.coordinates.at(2 * r);
      out[o + 5] = this.coordinates.at(2 * r + 1);
      out[o + 6] = rows.at(k + 8);
    }
    this.sealed = out;
    this.keys = undefined;
    this.localStrings.seal();
    this.forgetValues();
  }

  /** The named parts of a location (country, region, city) by id, for precedence (publisherGeoStands); undefined for 0. */
  get(id: number | undefined): GeoValue | undefined {
    if (!id || id >= this.size) return undefined;
    const names = this.localStrings.strings;
    const named = (lid: number) => names[lid] || undefined;
    if (this.sealed) {
      const o = id * GEO_LAYOUT.length;
      return { countryCode: named(this.sealed[o]), region: named(this.sealed[o + 1]), city: named(this.sealed[o + 2]) };
    }
    const rows = this.keys!.rows;
    const k = id * KEY_WIDTH;
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
  encode(strings: StringIds): Uint32Array {
    this.seal();
    const local = this.sealed!;
    const g = GEO_LAYOUT.length;
    const out = new Uint32Array(local.length);
    const names = this.localStrings.strings;
    const ids = new Uint32Array(names.length).fill(0xffffffff);
    const id = (lid: number): number => {
      let v = ids[lid];
      if (v === 0xffffffff) v = ids[lid] = strings.id(names[lid]);
      return v;
    };
    out[4] = out[5] = NAN_BITS;
    for (let o = g; o < local.length; o += g) {
      out[o] = id(local[o]);
      out[o + 1] = id(local[o + 1]);
      out[o + 2] = id(local[o + 2]);
      out[o + 3] = id(local[o + 3]);
      out[o + 4] = local[o + 4];
      out[o + 5] = local[o + 5];
      out[o + 6] = id(local[o + 6]);
    }
    return out;
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
