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
    const encoder = new TextEncoder();
    const texts = sets.map((s) => encoder.encode(JSON.stringify(s)));
    let total = 0;
    for (const t of texts) total += t.length;
    const bytes = sharedArray(Uint8Array, total);
    const offsets = sharedArray(Uint32Array, texts.length + 1);
    let at = 0;
    texts.forEach((t, i) => {
      offsets[i] = at;
      bytes.set(t, at);
      at += t.length;
    });
    offsets[texts.length] = at;
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
