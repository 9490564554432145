/**
 * Encoder for the MaxMind DB data section (format spec 2.0), the inverse of
 * decoder.ts. A data section deduplicates: every map, array and string of
 * four bytes or more is stored once, children before their parents, and
 * every later use of it is a pointer to that copy. Values are recognised by
 * a short key made of their members' offsets, so no value is serialized
 * twice to be compared.
 */

/** An unsigned integer with the MMDB width it is stored as (plain numbers are doubles). */
export class MmdbUint {
  constructor(
    readonly value: number | bigint,
    readonly bits: 16 | 32 | 64,
  ) {}
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

/** Shortest string stored once and pointed to: a pointer takes 2 to 5 bytes. */
const MIN_SHARED_STRING = 4;

const utf8 = new TextEncoder();

/**
 * Writes values into one data section. `shared` false writes every value in
 * full, in place (the metadata block, where pointers would be relative to it).
 */
export class MmdbDataWriter {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  private length = 0;
  /** Stored values by a hash of their key (see remember/recall): a string's key is its text, a map's or array's its members' offsets. */
  private readonly seen = new Map<number, number>();

  constructor(private readonly shared = true) {}

  /** Bytes written so far. */
  get size(): number {
    return this.length;
  }

  /** The data section (a view, valid until the next write). */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }

  /** Writes a value (or finds its stored copy); returns its offset in the section. */
  write(value: MmdbInput): number {
    if (this.shared && typeof value === 'object' && !(value instanceof MmdbUint)) return this.intern(value);
    const at = this.length;
    this.inline(value);
    return at;
  }

  /** A value written in full where the writer stands (no pointers). */
  private inline(v: MmdbInput): void {
    if (typeof v !== 'object' || v instanceof MmdbUint) return this.scalar(v);
    if (Array.isArray(v)) {
      this.control(T_ARRAY, v.length);
      for (const x of v) this.inline(x);
      return;
    }
    const keys = Object.keys(v);
    this.control(T_MAP, keys.length);
    for (const k of keys) {
      this.string(k);
      this.inline(v[k]);
    }
  }

  /**
   * The offset of a map, array or string of the section, storing it first
   * when it is new (its shared members before it, so it can point to them).
   */
  private intern(v: string | MmdbInput[] | { [key: string]: MmdbInput }): number {
    if (typeof v === 'string') {
      const known = this.recall(v);
      if (known >= 0) return known;
      const at = this.length;
      this.string(v);
      this.remember(v, at);
      return at;
    }
    const isArray = Array.isArray(v);
    const names = isArray ? null : Object.keys(v);
    const members: MmdbInput[] = isArray ? v : names!.map((k) => (v as { [key: string]: MmdbInput })[k]);
    // A member that is shared is referred to by its offset; a scalar by its typed text.
    const refs = members.map((m) => (this.sharesMember(m) ? this.intern(m as string | object as string) : -1));
    // '\u0000' starts no string of ours: a map's or array's key never equals a string's text.
    let key = isArray ? '\u0000a' : '\u0000m';
    for (let i = 0; i < members.length; i++) {
      if (names) key += `${this.intern(names[i])}=`;
      key += refs[i] >= 0 ? `@${refs[i]},` : `${scalarText(members[i] as string | number | boolean | MmdbUint)},`;
    }
    const known = this.recall(key);
    if (known >= 0) return known;
    const at = this.length;
    this.control(isArray ? T_ARRAY : T_MAP, members.length);
    for (let i = 0; i < members.length; i++) {
      if (names) this.pointer(this.intern(names[i]));
      if (refs[i] >= 0) this.pointer(refs[i]);
      else this.scalar(members[i] as string | number | boolean | MmdbUint);
    }
    this.remember(key, at);
    return at;
  }

  /** Whether a member is stored once and pointed to (maps, arrays, strings of MIN_SHARED_STRING or more). */
  private sharesMember(m: MmdbInput): boolean {
    if (typeof m === 'string') return m.length >= MIN_SHARED_STRING;
    return typeof m === 'object' && !(m instanceof MmdbUint);
  }

  private scalar(v: string | number | boolean | MmdbUint): void {
    if (typeof v === 'string') return this.string(v);
    if (typeof v === 'number') {
      this.control(T_DOUBLE, 8);
      this.ensure(8);
      this.view.setFloat64(this.length, v);
      this.length += 8;
      return;
    }
    if (typeof v === 'boolean') return this.control(T_BOOLEAN, v ? 1 : 0);
    this.uint(v);
  }

  private string(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    this.control(T_UTF8, n);
    this.ensure(n);
    utf8.encodeInto(s, this.buf.subarray(this.length, this.length + n));
    this.length += n;
  }

  private uint(u: MmdbUint): void {
    let x = BigInt(u.value);
    if (x < 0n || x >= 1n << BigInt(u.bits)) throw new RangeError(`${u.value} does not fit uint${u.bits}`);
    const bytes: number[] = [];
    for (; x > 0n; x >>= 8n) bytes.unshift(Number(x & 0xffn));
    this.control(u.bits === 16 ? T_UINT16 : u.bits === 32 ? T_UINT32 : T_UINT64, bytes.length);
    for (const b of bytes) this.byte(b);
  }

  /** Control byte(s) of a type and payload size (spec: extended types, size encodings). */
  private control(type: number, size: number): void {
    let sizeBits: number;
    if (size < 29) sizeBits = size;
    else if (size < 285) sizeBits = 29;
    else if (size < 65821) sizeBits = 30;
    else if (size < 16843037) sizeBits = 31;
    else throw new RangeError(`value of ${size} entries or bytes is too large for MMDB`);
    if (type <= 7) this.byte((type << 5) | sizeBits);
    else {
      this.byte(sizeBits);
      this.byte(type - 7);
    }
    if (sizeBits === 29) this.byte(size - 29);
    else if (sizeBits === 30) this.byte((size - 285) >>> 8), this.byte((size - 285) & 0xff);
    else if (sizeBits === 31) this.byte((size - 65821) >>> 16), this.byte(((size - 65821) >>> 8) & 0xff), this.byte((size - 65821) & 0xff);
  }

  /** A pointer to a data-section offset, in the shortest form that holds it. */
  private pointer(p: number): void {
    const c = T_POINTER << 5;
    if (p < 2048) {
      this.byte(c | (p >>> 8));
      this.byte(p & 0xff);
    } else if (p < 526336) {
      const q = p - 2048;
      this.byte(c | (1 << 3) | (q >>> 16));
      this.byte((q >>> 8) & 0xff);
      this.byte(q & 0xff);
    } else if (p < 134744064) {
      const q = p - 526336;
      this.byte(c | (2 << 3) | (q >>> 24));
      this.byte((q >>> 16) & 0xff);
      this.byte((q >>> 8) & 0xff);
      this.byte(q & 0xff);
    } else {
      this.byte(c | (3 << 3));
      for (const shift of [24, 16, 8, 0]) this.byte((p >>> shift) & 0xff);
    }
  }

  private byte(b: number): void {
    if (this.length === this.buf.length) this.ensure(1);
    this.buf[this.length++] = b;
  }

  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /**
   * Values are remembered by hashes of their keys, not the keys (a whole
   * index has millions of distinct values): a 53-bit map key and a 21-bit
   * check kept beside the offset, so a false match needs a 74-bit collision.
   */
  private remember(key: string, offset: number): void {
    hash(key);
    this.seen.set(hashed.key, hashed.check * 2 ** 32 + offset);
  }

  /** The offset of a value remembered under `key`, or -1. */
  private recall(key: string): number {
    hash(key);
    const v = this.seen.get(hashed.key);
    if (v === undefined) return -1;
    const offset = v % 2 ** 32;
    return (v - offset) / 2 ** 32 === hashed.check ? offset : -1;
  }
}

/** The last hash(): a 53-bit map key and a 21-bit check (no allocation per call). */
const hashed = { key: 0, check: 0 };

/** Three independent 32-bit multiplicative hashes of a string, folded into `hashed`. */
function hash(s: string): void {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ s.length;
  let c = 0x9e3779b9;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    a = Math.imul(a ^ ch, 0x01000193);
    b = Math.imul(b ^ ch, 0x5bd1e995);
    c = Math.imul(c ^ ch, 0x85ebca6b);
  }
  // Final mixing so every input bit reaches the bits kept.
  a = Math.imul(a ^ (a >>> 16), 0x7feb352d) >>> 0;
  b = Math.imul(b ^ (b >>> 15), 0x846ca68b) >>> 0;
  c = Math.imul(c ^ (c >>> 13), 0xc2b2ae35) >>> 0;
  hashed.key = a * 2 ** 21 + (b >>> 11);
  hashed.check = c >>> 11;
}

/** A scalar's typed text inside a key: a double, an unsigned integer and a string of the same digits differ. */
function scalarText(v: string | number | boolean | MmdbUint): string {
  if (typeof v === 'string') return `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  if (typeof v === 'number') return `d${Object.is(v, -0) ? '-0' : v}`;
  if (typeof v === 'boolean') return v ? 'T' : 'F';
  return `u${v.bits}:${v.value}`;
}
