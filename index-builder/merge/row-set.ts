/**
 * Deduplicated fixed-width u32 rows: an open-addressing hash table over a
 * growable row store. The sweep asks for a record id millions of times;
 * keying a Map by the joined row text kept a string per record alive and
 * made one more per interval.
 */
import { GrowableU32 } from './growable.ts';

export class RowSet {
  /** Row i occupies [i * width, (i + 1) * width). */
  readonly rows: GrowableU32;
  private slots: Int32Array;
  private mask: number;
  private count = 0;

  constructor(readonly width: number, initialRows = 1024) {
    this.rows = new GrowableU32(width * initialRows);
    this.slots = new Int32Array(1 << 12).fill(-1);
    this.mask = this.slots.length - 1;
  }

  /** Number of distinct rows. */
  get size(): number {
    return this.count;
  }

  /** The id of `row` (its first `width` values), adding it when new; ids count from 0 in insertion order. */
  idOf(row: ArrayLike<number>): number {
    let slot = hashRow(row, this.width, 0) & this.mask;
    for (;;) {
      const id = this.slots[slot];
      if (id < 0) break;
      if (this.equals(id, row)) return id;
      slot = (slot + 1) & this.mask;
    }
    const id = this.count++;
    for (let k = 0; k < this.width; k++) this.rows.push(row[k] >>> 0);
    this.slots[slot] = id;
    if (this.count * 2 > this.slots.length) this.grow();
    return id;
  }

  private equals(id: number, row: ArrayLike<number>): boolean {
    const base = id * this.width;
    for (let k = 0; k < this.width; k++) if (this.rows.at(base + k) !== row[k] >>> 0) return false;
    return true;
  }

  /** Doubles the slot table (load stays at or below one half) and re-files every row. */
  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = slots.length - 1;
    const rows = this.rows.raw();
    for (let id = 0; id < this.count; id++) {
      // Hashed in place: a subarray per row would be millions of short-lived views.
      let slot = hashRow(rows, this.width, id * this.width) & mask;
      while (slots[slot] >= 0) slot = (slot + 1) & mask;
      slots[slot] = id;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/** A 32-bit hash of the `width` u32 values from `at` (murmur3-style mixing). */
function hashRow(row: ArrayLike<number>, width: number, at: number): number {
  let h = 0x9747b28c;
  for (let k = 0; k < width; k++) {
    let v = Math.imul(row[at + k] >>> 0, 0xcc9e2d51);
    v = (v << 15) | (v >>> 17);
    h ^= Math.imul(v, 0x1b873593);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
