/**
 * Sections stored transformed in the history (store.ts): the tables that
 * hold interval numbers (`V4L1`, `V6L1`, and `V6SB`'s interval entries;
 * index-builder/FORMAT.md) change all through after one inserted interval,
 * every later entry shifted by the same amount. Stored as differences from
 * the entry before, they change only where an interval was inserted, so the
 * chunks after it are the previous version's again. A recipe lists the
 * ranges it transformed; a rebuild undoes them as the bytes stream out, and
 * the rebuilt file is still checked whole against the version's hash, so a
 * fault here costs disk, never a wrong answer.
 */
import type { MappedIndex } from '../map-index-file.ts';

/** How a range was transformed (a recipe's third field). */
export const enum TransformKind {
  /** u32 first differences (mod 2^32): a monotone table (`V4L1`, `V6L1`). */
  Delta32 = 1,
  /** `V6SB` nodes: each interval entry (bit 31 clear) as its 31-bit difference from the previous one; node headers and record entries as they are. */
  V6Nodes = 2,
}

/** A transformed range of the file: [byte offset, byte length, kind]; offset and length are multiples of 4. */
export type SectionTransform = [number, number, TransformKind];

/** Which sections are transformed, and how. */
const TRANSFORMED: [string, TransformKind][] = [
  ['V4ST', TransformKind.Delta32],
  ['V4L1', TransformKind.Delta32],
  ['V6L1', TransformKind.Delta32],
  ['V6SB', TransformKind.V6Nodes],
];
/** Most ranges a recipe may list (a fetched recipe is bounded by it). */
export const MAX_TRANSFORMS = 16;
const NODE_MAX_BITS = 16;
const HIGH = 0x80000000;
const LOW31 = 0x7fffffff;

/** A stateful decoder of one range: turns the next encoded words into the original ones, in place. */
type Decoder = (words: Uint32Array) => void;

function delta32Decoder(): Decoder {
  let prev = 0;
  return (words) => {
    for (let i = 0; i < words.length; i++) words[i] = prev = (words[i] + prev) >>> 0;
  };
}

function v6NodesDecoder(): Decoder {
  let remaining = 0;
  let last = 0;
  return (words) => {
    for (let i = 0; i < words.length; i++) {
      const e = words[i];
      if (remaining === 0) {
        // A header out of range (bytes not this encoder's) passes as it is: the rebuilt file's hash refuses it.
        if (e >= 1 && e <= NODE_MAX_BITS) remaining = 1 << e;
      } else {
        if ((e & HIGH) === 0) words[i] = last = (e + last) & LOW31;
        remaining--;
      }
    }
  };
}

const decoderOf = (kind: TransformKind): Decoder => (kind === TransformKind.Delta32 ? delta32Decoder() : v6NodesDecoder());

/** The encoded words of a section, or null when it does not have the shape the kind needs (it is then stored as it is). */
function encode(words: Uint32Array, kind: TransformKind): Uint32Array | null {
  const out = new Uint32Array(words.length);
  if (kind === TransformKind.Delta32) {
    let prev = 0;
    for (let i = 0; i < words.length; i++) {
      out[i] = (words[i] - prev) >>> 0;
      prev = words[i];
    }
    return out;
  }
  let remaining = 0;
  let last = 0;
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (remaining === 0) {
      if (w < 1 || w > NODE_MAX_BITS) return null;
      remaining = 1 << w;
      out[i] = w;
    } else {
      if ((w & HIGH) === 0) {
        out[i] = (w - last) & LOW31;
        last = w;
      } else out[i] = w;
      remaining--;
    }
  }
  return remaining === 0 ? out : null;
}

/** Whether decoding `encoded` gives `original` again (checked in pieces, so no second copy is held). */
function roundTrips(encoded: Uint32Array, original: Uint32Array, kind: TransformKind): boolean {
  const decode = decoderOf(kind);
  const piece = new Uint32Array(1 << 18);
  try {
    for (let at = 0; at < encoded.length; at += piece.length) {
      const n = Math.min(piece.length, encoded.length - at);
      const view = piece.subarray(0, n);
      view.set(encoded.subarray(at, at + n));
      decode(view);
      for (let i = 0; i < n; i++) if (view[i] !== original[at + i]) return false;
    }
  } catch {
    return false;
  }
  return true;
}

/** A stretch of the file as the store chunks and stores it: an encoded copy of a transformed section, or a view of the file. */
export interface StoredSegment {
  start: number;
  bytes: Uint8Array;
}

/**
 * The file `data` (of `index`) as the store chunks it: its transformable
 * sections encoded (in copies: the file and its mapping are not written),
 * the rest as views, in file order; and the ranges transformed. A section is
 * transformed only when its decoding gives it back exactly.
 */
export function storedSegments(index: MappedIndex, data: Uint8Array): { transforms: SectionTransform[]; segments: StoredSegment[] } {
  const transforms: SectionTransform[] = [];
  const encoded = new Map<number, Uint8Array>();
  for (const [tag, kind] of TRANSFORMED) {
    const s = index.sections.get(tag);
    if (!s || s.length === 0 || s.length % 4 !== 0 || (data.byteOffset + s.offset) % 4 !== 0) continue;
    const words = new Uint32Array(data.buffer, data.byteOffset + s.offset, s.length / 4);
    const out = encode(words, kind);
    if (!out || !roundTrips(out, words, kind)) continue;
    transforms.push([s.offset, s.length, kind]);
    encoded.set(s.offset, new Uint8Array(out.buffer));
  }
  transforms.sort((a, b) => a[0] - b[0]);
  const segments: StoredSegment[] = [];
  let at = 0;
  for (const [offset, length] of transforms) {
    if (offset > at) segments.push({ start: at, bytes: data.subarray(at, offset) });
    segments.push({ start: offset, bytes: encoded.get(offset)! });
    at = offset + length;
  }
  if (at < data.length) segments.push({ start: at, bytes: data.subarray(at) });
  return { transforms, segments };
}

/** Whether a recipe's transforms (from a publisher: hostile until its rebuild checks) are well formed: known kinds, word-aligned, ascending, apart. */
export function transformsWellFormed(t: unknown): t is SectionTransform[] {
  if (!Array.isArray(t) || t.length > MAX_TRANSFORMS) return false;
  let end = 0;
  for (const r of t) {
    if (!Array.isArray(r) || r.length !== 3) return false;
    const [offset, length, kind] = r;
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < end || length <= 0 || offset % 4 !== 0 || length % 4 !== 0) return false;
    if (kind !== TransformKind.Delta32 && kind !== TransformKind.V6Nodes) return false;
    end = offset + length;
  }
  return true;
}

/**
 * Wraps `emit` (the rebuilt file's bytes, in order) so that the ranges of
 * `transforms` come out decoded; `finish` throws when the bytes ended inside one.
 */
export function untransformingEmitter(transforms: readonly SectionTransform[], emit: (bytes: Uint8Array) => void): { emit: (bytes: Uint8Array) => void; finish: () => void } {
  let pos = 0;
  let next = 0; // the first transform not yet passed
  let decode: Decoder | null = null;
  const carry = new Uint8Array(4);
  let carried = 0;
  const inside = (bytes: Uint8Array, end: number) => {
    // Whole words only; a word split between two pieces waits in `carry`.
    const total = carried + bytes.length;
    const whole = total - (total % 4);
    if (whole === 0) {
      carry.set(bytes, carried);
      carried = total;
    } else {
      const buf = new Uint8Array(whole);
      buf.set(carry.subarray(0, carried));
      const fromBytes = whole - carried;
      buf.set(bytes.subarray(0, fromBytes), carried);
      const rest = bytes.subarray(fromBytes);
      carry.set(rest);
      carried = rest.length;
      decode!(new Uint32Array(buf.buffer, 0, whole / 4));
      emit(buf);
    }
    pos += bytes.length;
    if (pos === end) decode = null;
  };
  return {
    emit(bytes) {
      let at = 0;
      while (at < bytes.length) {
        const t = transforms[next];
        if (!t || pos < t[0]) {
          const take = t ? Math.min(bytes.length - at, t[0] - pos) : bytes.length - at;
          emit(bytes.subarray(at, at + take));
          pos += take;
          at += take;
          continue;
        }
        const end = t[0] + t[1];
        decode ??= decoderOf(t[2]);
        const take = Math.min(bytes.length - at, end - pos);
        inside(bytes.subarray(at, at + take), end);
        at += take;
        if (pos === end) next++;
      }
    },
    finish() {
      if (decode !== null || next < transforms.length) throw new Error(`the rebuilt bytes end at ${pos}, inside or before a transformed range`);
    },
  };
}
