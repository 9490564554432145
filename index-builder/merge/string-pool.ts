/**
 * The file's string table while it is built: every distinct string once, as
 * UTF-8 bytes in one growing buffer with an open-addressing hash over them.
 * Strings grow with the input (each route's prefix and origins among them);
 * a JS string and a Map entry apiece would cost more than the bytes themselves.
 * Ids count from 0 (the empty string) in first-seen order, and the encoded
 * table is the buffers themselves. A pool seeded with the previous index's
 * table (stable ids) keeps every one of its strings at its id and offset,
 * used or not, and appends new ones: an insertion would shift every later
 * offset in STRB.
 */
import { GrowableU32 } from './growable.ts';

/** Anything that hands out string ids (the encoders need only this). */
export interface StringIds {
  /** The id of a string (0 for undefined, null or empty). */
  id(s: string | null | undefined): number;
}

/** Address space the bytes may grow to (reserved, not committed). */
const MAX_BYTES = 2 ** 31;

export class StringPool implements StringIds {
  /** offsets[i]..offsets[i + 1] are string i's bytes; one more offset than strings. */
  private readonly offsets = new GrowableU32(1 << 16);
  private readonly store = new ArrayBuffer(1 << 20, { maxByteLength: MAX_BYTES });
  private bytes = new Uint8Array(this.store);
  private used = 0;
  private slots = new Int32Array(1 << 16).fill(-1);
  private mask = this.slots.length - 1;
  private scratch = new Uint8Array(256);
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();
  /** Strings 0..seeded-1 came from the previous index; `used` marks those this build asked for. */
  private seeded = 0;
  private usedIds = new Uint8Array(0);

  constructor() {
    // String 0 is the empty string.
    this.offsets.push(0);
    this.offsets.push(0);
  }

  /** Number of strings, the empty one included. */
  get count(): number {
    return this.offsets.length - 1;
  }

  id(s: string | null | undefined): number {
    if (s === undefined || s === null || s === '') return 0;
    const n = this.encode(s);
    const key = this.scratch;
    let h = 0x811c9dc5;
    for (let i = 0; i < n; i++) h = Math.imul(h ^ key[i], 0x01000193);
    let slot = (h ^ (h >>> 15)) & this.mask;
    for (;;) {
      const id = this.slots[slot];
      if (id < 0) break;
      if (this.equals(id, n)) {
        if (id < this.seeded) this.usedIds[id] = 1;
        return id;
      }
      slot = (slot + 1) & this.mask;
    }
    const id = this.count;
    this.append(n);
    this.slots[slot] = id;
    if (id * 2 > this.slots.length) this.rehash();
    return id;
  }

  /**
   * Fills an empty pool with a previous index's string table (STRO, STRB) at
   * their ids; throws when the table is not well formed.
   */
  seed(offsets: Uint32Array, bytes: Uint8Array): void {
    if (this.count !== 1) throw new Error('StringPool.seed: the pool is not empty');
    checkStringTable(offsets, bytes.length);
    const n = offsets.length - 1;
    this.store.resize(Math.max(this.bytes.length, bytes.length));
    this.bytes = new Uint8Array(this.store);
    this.bytes.set(bytes);
    this.used = bytes.length;
    this.offsets.truncate(1);
    for (let i = 1; i <= n; i++) this.offsets.push(offsets[i]);
    this.seeded = n;
    this.usedIds = new Uint8Array(n);
    this.usedIds[0] = 1;
    // A well-formed previous table holds each string once; a repeat keeps its first id.
    while (n * 2 > this.slots.length) this.slots = new Int32Array(this.slots.length * 2);
    this.mask = this.slots.length - 1;
    this.rehash(true);
  }

  /** The text of string `id`. */
  text(id: number): string {
    return this.decoder.decode(this.bytes.subarray(this.offsets.at(id), this.offsets.at(id + 1)));
  }

  /** Seeded strings no build value asked for: carried at their ids as garbage (count and bytes). */
  deadSeeded(): { strings: number; bytes: number } {
    let strings = 0;
    let bytes = 0;
    for (let id = 1; id < this.seeded; id++) {
      if (this.usedIds[id]) continue;
      strings++;
      bytes += this.offsets.at(id + 1) - this.offsets.at(id);
    }
    return { strings, bytes };
  }

  /** The table as the file stores it: offsets (u32, one more than strings) and the UTF-8 bytes (views, no copy). */
  encoded(): { offsets: Uint32Array; bytes: Uint8Array } {
    return { offsets: this.offsets.view(), bytes: this.bytes.subarray(0, this.used) };
  }

  /** UTF-8 of s into scratch; its length. ASCII (nearly every string here) is copied without the encoder. */
  private encode(s: string): number {
    if (this.scratch.length < s.length * 3) this.scratch = new Uint8Array(s.length * 3);
    const out = this.scratch;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return this.encoder.encodeInto(s, out).written;
      out[i] = c;
    }
    return s.length;
  }

  private equals(id: number, n: number): boolean {
    const from = this.offsets.at(id);
    if (this.offsets.at(id + 1) - from !== n) return false;
    const bytes = this.bytes;
    const key = this.scratch;
    for (let i = 0; i < n; i++) if (bytes[from + i] !== key[i]) return false;
    return true;
  }

  private append(n: number): void {
    const total = this.used + n;
    if (total > this.bytes.length) {
      if (total > MAX_BYTES) throw new RangeError(`string table exceeds ${MAX_BYTES} bytes`);
      this.store.resize(Math.min(MAX_BYTES, Math.max(total, Math.ceil(this.bytes.length * 1.5))));
      this.bytes = new Uint8Array(this.store);
    }
    this.bytes.set(this.scratch.subarray(0, n), this.used);
    this.used = total;
    this.offsets.push(total);
  }

  /** Doubles the slot table (or, `inPlace`, refills the current one) and re-files every string (load stays at or below one half). */
  private rehash(inPlace = false): void {
    const slots = new Int32Array(this.slots.length * (inPlace ? 1 : 2)).fill(-1);
    const mask = slots.length - 1;
    const bytes = this.bytes;
    for (let id = 1; id < this.count; id++) {
      let h = 0x811c9dc5;
      for (let i = this.offsets.at(id), end = this.offsets.at(id + 1); i < end; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
      let slot = (h ^ (h >>> 15)) & mask;
      while (slots[slot] >= 0) slot = (slot + 1) & mask;
      slots[slot] = id;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/** Throws unless `offsets` describe a string table of `byteLength` bytes as the file stores it (string 0 empty, offsets ascending). */
export function checkStringTable(offsets: Uint32Array, byteLength: number): void {
  const n = offsets.length - 1;
  if (n < 1 || offsets[0] !== 0 || offsets[1] !== 0 || offsets[n] !== byteLength) throw new Error('string table offsets do not match its bytes');
  for (let i = 1; i < n; i++) if (offsets[i + 1] < offsets[i]) throw new Error(`string table offsets decrease at string ${i}`);
  if (byteLength > MAX_BYTES) throw new RangeError(`string table exceeds ${MAX_BYTES} bytes`);
}
