/**
 * Encoder for the MaxMind DB data section (format spec 2.0), the inverse of
 * decoder.ts. A data section deduplicates: a record, map, array or string
 * written before is written again as a pointer to its first copy.
 */

/** An unsigned integer with the MMDB width it is stored as (plain numbers are doubles). */
export class MmdbUint {
  constructor(
    readonly value: number | bigint,
    readonly bits: 16 | 32 | 64,
  ) {}

  /** Tagged (a NUL key no map of ours has), so a dedup key never confuses it with a double or a string. */
  toJSON(): Record<string, string> {
    return { [`\u0000u${this.bits}`]: String(this.value) };
  }
}

/** A value the encoder writes: strings, doubles, booleans, unsigned integers, arrays and maps. */
export type MmdbInput = string | number | boolean | MmdbUint | MmdbInput[] | { [key: string]: MmdbInput };

const T_POINTER = 1;
const T_UTF8 = 2;
const T_DOUBLE = 3;
const T_UINT16 = 5;
const T_UINT32 = 6;
const T_MAP = 7;
const T_UINT64 = 9;
const T_ARRAY = 11;
const T_BOOLEAN = 14;

/** Shortest string worth a pointer: a pointer takes 2 to 5 bytes. */
const MIN_SHARED_STRING = 4;

/** A growing byte buffer. */
class Bytes {
  buf = new Uint8Array(1 << 16);
  length = 0;

  ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  push(b: number): void {
    this.ensure(1);
    this.buf[this.length++] = b;
  }

  append(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** The bytes written so far (a view). */
  view(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

const utf8 = new TextEncoder();

/**
 * Writes values into one data section. `shared` false writes every value in
 * full (the metadata block, where pointers would be relative to it).
 */
export class MmdbDataWriter {
  private readonly out = new Bytes();
  /** The first full copy of a string, map or array, by a hash of its canonical text (see remember/recall). */
  private readonly seen = new Map<number, number>();

  constructor(private readonly shared = true) {}

  /** Bytes written so far. */
  get size(): number {
    return this.out.length;
  }

  /** The data section (a view, valid until the next write). */
  bytes(): Uint8Array {
    return this.out.view();
  }

  /** Writes a value (or finds its earlier copy); returns its offset in the section. */
  write(value: MmdbInput): number {
    if (!this.shared) {
      const at = this.out.length;
      this.value(value);
      return at;
    }
    const key = keyOf(value);
    const known = this.recall(key);
    if (known >= 0) return known;
    const at = this.out.length;
    this.value(value);
    this.remember(key, at);
    return at;
  }

  /** Writes a value in place: shareable parts seen before become pointers. */
  private value(v: MmdbInput): void {
    if (typeof v === 'string') return this.shareable(v, v.length >= MIN_SHARED_STRING);
    if (typeof v === 'number') {
      this.control(T_DOUBLE, 8);
      const b = new Uint8Array(8);
      new DataView(b.buffer).setFloat64(0, v);
      return this.out.append(b);
    }
    if (typeof v === 'boolean') return this.control(T_BOOLEAN, v ? 1 : 0);
    if (v instanceof MmdbUint) return this.uint(v);
    this.shareable(v, true);
  }

  /** A string, map or array: a pointer to its first copy when there is one and sharing is on. */
  private shareable(v: string | MmdbInput[] | { [key: string]: MmdbInput }, share: boolean): void {
    let key = '';
    if (this.shared && share) {
      key = keyOf(v);
      const known = this.recall(key);
      if (known >= 0) return this.pointer(known);
    }
    const at = this.out.length;
    if (typeof v === 'string') {
      const b = utf8.encode(v);
      this.control(T_UTF8, b.length);
      this.out.append(b);
    } else if (Array.isArray(v)) {
      this.control(T_ARRAY, v.length);
      for (const x of v) this.value(x);
    } else {
      const keys = Object.keys(v);
      this.control(T_MAP, keys.length);
      for (const k of keys) {
        this.shareable(k, this.shared);
        this.value(v[k]);
      }
    }
    if (key !== '') this.remember(key, at);
  }

  /**
   * Values are remembered by hashes, not their text (a whole index has
   * millions of distinct values of ~1 KB): a 53-bit map key and a 21-bit
   * check kept beside the offset, so a false match needs a 74-bit collision.
   */
  private remember(key: string, offset: number): void {
    this.seen.set(hashKey(key), checkOf(key) * 2 ** 32 + offset);
  }

  /** The offset of a value remembered under `key`, or -1. */
  private recall(key: string): number {
    const v = this.seen.get(hashKey(key));
    if (v === undefined) return -1;
    const offset = v % 2 ** 32;
    return (v - offset) / 2 ** 32 === checkOf(key) ? offset : -1;
  }

  private uint(u: MmdbUint): void {
    let x = BigInt(u.value);
    if (x < 0n || x >= 1n << BigInt(u.bits)) throw new RangeError(`${u.value} does not fit uint${u.bits}`);
    const bytes: number[] = [];
    for (; x > 0n; x >>= 8n) bytes.unshift(Number(x & 0xffn));
    this.control(u.bits === 16 ? T_UINT16 : u.bits === 32 ? T_UINT32 : T_UINT64, bytes.length);
    for (const b of bytes) this.out.push(b);
  }

  /** Control byte(s) of a type and payload size (spec: extended types, size encodings). */
  private control(type: number, size: number): void {
    let sizeBits: number;
    let extra: number[] = [];
    if (size < 29) sizeBits = size;
    else if (size < 285) (sizeBits = 29), (extra = [size - 29]);
    else if (size < 65821) (sizeBits = 30), (extra = [(size - 285) >>> 8, (size - 285) & 0xff]);
    else if (size < 16843037) (sizeBits = 31), (extra = [(size - 65821) >>> 16, ((size - 65821) >>> 8) & 0xff, (size - 65821) & 0xff]);
    else throw new RangeError(`value of ${size} entries or bytes is too large for MMDB`);
    if (type <= 7) this.out.push((type << 5) | sizeBits);
    else {
      this.out.push(sizeBits);
      this.out.push(type - 7);
    }
    for (const b of extra) this.out.push(b);
  }

  /** A pointer to a data-section offset, in the shortest form that holds it. */
  private pointer(p: number): void {
    const c = T_POINTER << 5;
    if (p < 2048) {
      this.out.push(c | (p >>> 8));
      this.out.push(p & 0xff);
    } else if (p < 526336) {
      const q = p - 2048;
      this.out.push(c | (1 << 3) | (q >>> 16));
      this.out.push((q >>> 8) & 0xff);
      this.out.push(q & 0xff);
    } else if (p < 134744064) {
      const q = p - 526336;
      this.out.push(c | (2 << 3) | (q >>> 24));
      this.out.push((q >>> 16) & 0xff);
      this.out.push((q >>> 8) & 0xff);
      this.out.push(q & 0xff);
    } else {
      this.out.push(c | (3 << 3));
      for (const shift of [24, 16, 8, 0]) this.out.push((p >>> shift) & 0xff);
    }
  }
}

const hashKey = (key: string) => Bun.hash.xxHash32(key, 0) * 2 ** 21 + (Bun.hash.xxHash32(key, 1) & 0x1fffff);
const checkOf = (key: string) => Bun.hash.crc32(key) & 0x1fffff;

/** Canonical text of a value for dedup: type-tagged so `"1"`, `1` and uint `1` differ. */
function keyOf(v: MmdbInput): string {
  return typeof v === 'string' ? `s${v}` : `v${JSON.stringify(v)}`;
}
