/**
 * The distinct field sets of an overrides table as one pool of JSON text
 * (UTF-8 bytes and offsets, in shared memory), not an object per set: a
 * million lines each with its own note cost their text and four bytes each,
 * and the pool passes to every worker without a copy. A set is decoded when
 * an address under it is looked up, and kept in a small bounded memo.
 */
import type { OverrideFields } from '../../contract/overrides.ts';

/** Decoded sets kept per pool (a lookup under an override decodes at most once while it stays). */
const DECODED_MAX = 4096;

/** A typed array of `n` elements in shared memory (posted to a worker, it is the same memory). */
export function sharedArray<T extends Uint8Array | Uint32Array>(Kind: { new (buffer: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number }, n: number): T {
  return new Kind(new SharedArrayBuffer(Math.max(1, n) * Kind.BYTES_PER_ELEMENT)).subarray(0, n) as T;
}

/** A copy of `a` in shared memory. */
export function toShared<T extends Uint8Array | Uint32Array>(a: T): T {
  const out = sharedArray(a.constructor as { new (buffer: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number }, a.length);
  out.set(a);
  return out;
}

/** The pool's memory, as posted between threads. */
export interface FieldPoolParts {
  bytes: Uint8Array;
  /** Set i is bytes[offsets[i], offsets[i + 1]). */
  offsets: Uint32Array;
}

/** Field sets by number. */
export class FieldPool {
  private readonly decoded = new Map<number, Readonly<OverrideFields>>();

  constructor(readonly parts: FieldPoolParts) {}

  /** Encodes `sets` (in order: set i keeps number i). */
  static of(sets: readonly Readonly<OverrideFields>[]): FieldPool {
    // One growing buffer, no array per set (a million sets would be a million small arrays).
    const encoder = new TextEncoder();
    const offsets = sharedArray(Uint32Array, sets.length + 1);
    let buffer = new Uint8Array(1024);
    let at = 0;
    sets.forEach((s, i) => {
      const text = JSON.stringify(s);
      // UTF-8 takes at most 3 bytes per UTF-16 unit.
      while (buffer.length - at < text.length * 3) {
        const more = new Uint8Array(buffer.length * 2);
        more.set(buffer.subarray(0, at));
        buffer = more;
      }
      offsets[i] = at;
      at += encoder.encodeInto(text, buffer.subarray(at)).written;
    });
    offsets[sets.length] = at;
    const bytes = sharedArray(Uint8Array, at);
    bytes.set(buffer.subarray(0, at));
    return new FieldPool({ bytes, offsets });
  }

  get size(): number {
    return this.parts.offsets.length - 1;
  }

  get byteLength(): number {
    return this.parts.bytes.byteLength + this.parts.offsets.byteLength;
  }

  /** Set number `i`, frozen. */
  get(i: number): Readonly<OverrideFields> {
    let set = this.decoded.get(i);
    if (set === undefined) {
      const { bytes, offsets } = this.parts;
      // A copy: TextDecoder does not read shared memory.
      set = Object.freeze(JSON.parse(new TextDecoder().decode(bytes.slice(offsets[i], offsets[i + 1]))) as OverrideFields);
      if (this.decoded.size >= DECODED_MAX) this.decoded.clear();
      this.decoded.set(i, set);
    }
    return set;
  }
}
