/**
 * Decoder for the MaxMind DB data section (format spec 2.0): turns the
 * self-describing binary values into plain JS values.
 */

/** A value as stored in an MMDB data section. */
export type MmdbValue =
  | string
  | number
  | bigint
  | boolean
  | Uint8Array
  | MmdbValue[]
  | { [key: string]: MmdbValue }
  | null;

/** The file is not a well-formed MaxMind DB (thrown with a readable reason). */
export class MmdbFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MmdbFormatError';
  }
}

const T_POINTER = 1;
const T_UTF8 = 2;
const T_DOUBLE = 3;
const T_BYTES = 4;
const T_UINT16 = 5;
const T_UINT32 = 6;
const T_MAP = 7;
const T_INT32 = 8;
const T_UINT64 = 9;
const T_UINT128 = 10;
const T_ARRAY = 11;
const T_CONTAINER = 12;
const T_END = 13;
const T_BOOLEAN = 14;
const T_FLOAT = 15;

/** Deepest nesting accepted; real databases use < 10, so more means a pointer loop. */
const MAX_DEPTH = 64;

/** Decodes values from one data section; offsets are relative to its start. */
export class MmdbDecoder {
  private readonly view: DataView;
  private readonly text = new TextDecoder('utf-8');
  /** Offset just past the last value decoded by `decodeAt`. */
  private pos = 0;
  /** Map keys repeat millions of times (usually via pointers): decode each once. */
  private readonly keyCache = new Map<number, string>();

  constructor(
    private readonly buf: Uint8Array,
    /** Absolute offset of the data section in `buf`. */
    private readonly base: number,
  ) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /** Decodes the value at a data-section offset. */
  decode(offset: number): MmdbValue {
    this.pos = this.base + offset;
    return this.value(0);
  }

  private byte(): number {
    if (this.pos >= this.buf.length) throw new MmdbFormatError(`data section read past end of file at ${this.pos}`);
    return this.buf[this.pos++];
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new MmdbFormatError(`data section read past end of file at ${this.pos}`);
  }

  private value(depth: number): MmdbValue {
    if (depth > MAX_DEPTH) throw new MmdbFormatError('data nested too deeply (pointer loop?)');
    const ctrl = this.byte();
    let type = ctrl >>> 5;
    if (type === T_POINTER) return this.followPointer(ctrl, depth);
    if (type === 0) type = 7 + this.byte();
    const size = this.size(ctrl & 0x1f);
    return this.payload(type, size, depth);
  }

  private size(bits: number): number {
    if (bits < 29) return bits;
    if (bits === 29) return 29 + this.byte();
    if (bits === 30) return 285 + ((this.byte() << 8) | this.byte());
    return 65821 + ((this.byte() << 16) | (this.byte() << 8) | this.byte());
  }

  /** Reads a pointer's target offset (relative to the data section). */
  private pointerTarget(ctrl: number): number {
    const ss = (ctrl >>> 3) & 3;
    const vvv = ctrl & 7;
    if (ss === 0) return (vvv << 8) | this.byte();
    if (ss === 1) return ((vvv << 16) | (this.byte() << 8) | this.byte()) + 2048;
    if (ss === 2) return ((vvv << 24) | (this.byte() << 16) | (this.byte() << 8) | this.byte()) + 526336;
    this.need(4);
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }

  private followPointer(ctrl: number, depth: number): MmdbValue {
    const target = this.pointerTarget(ctrl);
    const back = this.pos;
    this.pos = this.base + target;
    const v = this.value(depth + 1);
    this.pos = back;
    return v;
  }

  private payload(type: number, size: number, depth: number): MmdbValue {
    switch (type) {
      case T_UTF8: {
        this.need(size);
        const s = this.text.decode(this.buf.subarray(this.pos, this.pos + size));
        this.pos += size;
        return s;
      }
      case T_DOUBLE: {
        if (size !== 8) throw new MmdbFormatError(`double of size ${size}`);
        this.need(8);
        const v = this.view.getFloat64(this.pos);
        this.pos += 8;
        return v;
      }
      case T_FLOAT: {
        if (size !== 4) throw new MmdbFormatError(`float of size ${size}`);
        this.need(4);
        const v = this.view.getFloat32(this.pos);
        this.pos += 4;
        return v;
      }
      case T_BYTES: {
        this.need(size);
        const b = this.buf.slice(this.pos, this.pos + size);
        this.pos += size;
        return b;
      }
      case T_UINT16:
      case T_UINT32:
        return this.unsigned(size, 4);
      case T_INT32: {
        const u = this.unsigned(size, 4) as number;
        return size === 4 ? u | 0 : u;
      }
      case T_UINT64:
        return this.unsigned(size, 8);
      case T_UINT128:
        return this.unsigned(size, 16);
      case T_MAP:
        return this.map(size, depth);
      case T_ARRAY: {
        const arr: MmdbValue[] = new Array(size);
        for (let i = 0; i < size; i++) arr[i] = this.value(depth + 1);
        return arr;
      }
      case T_BOOLEAN:
        return size !== 0;
      case T_CONTAINER:
      case T_END:
        return null;
      default:
        throw new MmdbFormatError(`unknown data type ${type} at ${this.pos - 1}`);
    }
  }

  /** Unsigned big-endian integer of `size` bytes; a bigint when it may exceed 2^53. */
  private unsigned(size: number, maxBytes: number): number | bigint {
    if (size > maxBytes) throw new MmdbFormatError(`integer of ${size} bytes`);
    this.need(size);
    if (size <= 6) {
      let v = 0;
      for (let i = 0; i < size; i++) v = v * 256 + this.buf[this.pos++];
      return v;
    }
    let v = 0n;
    for (let i = 0; i < size; i++) v = (v << 8n) | BigInt(this.buf[this.pos++]);
    return v;
  }

  private map(size: number, depth: number): { [key: string]: MmdbValue } {
    const out: { [key: string]: MmdbValue } = {};
    for (let i = 0; i < size; i++) {
      const key = this.key();
      out[key] = this.value(depth + 1);
    }
    return out;
  }

  /** A map key: a string, usually behind a pointer; cached by its offset. */
  private key(): string {
    let ctrl = this.byte();
    let back = -1;
    if (ctrl >>> 5 === T_POINTER) {
      const target = this.pointerTarget(ctrl);
      back = this.pos;
      this.pos = this.base + target;
      ctrl = this.byte();
    }
    const at = this.pos - 1;
    const cached = this.keyCache.get(at);
    let key: string;
    if (cached !== undefined) {
      key = cached;
      // Skip the string body without decoding it again.
      const size = this.size(ctrl & 0x1f);
      this.pos += size;
    } else {
      if (ctrl >>> 5 !== T_UTF8) throw new MmdbFormatError(`map key is not a string at ${at}`);
      key = this.payload(T_UTF8, this.size(ctrl & 0x1f), 0) as string;
      this.keyCache.set(at, key);
    }
    if (back >= 0) this.pos = back;
    return key;
  }
}
