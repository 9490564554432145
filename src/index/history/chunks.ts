/**
 * Content-defined chunking (a gear rolling hash, as FastCDC): cut points
 * depend only on the bytes around them, so an insertion moves the cuts near
 * it and leaves every other chunk of a successive index identical, and the
 * history stores only the chunks that changed (store.ts).
 */

/** Smallest, average (a power of two) and largest chunk. Small: a changed interval costs about one chunk. */
export const MIN_CHUNK = 1024;
export const AVG_CHUNK = 4096;
export const MAX_CHUNK = 16384;

/** The cut test looks at the hash's high bits: with a left-shifting gear hash those depend on the last 32 bytes. */
const CUT_MASK = (((AVG_CHUNK - 1) << (32 - Math.log2(AVG_CHUNK))) >>> 0) as number;

/** 256 fixed pseudo-random words (xorshift32 from a fixed seed): cut points must be the same in every process and version. */
const GEAR = (() => {
  const t = new Uint32Array(256);
  let x = 0x9e3779b9;
  for (let i = 0; i < 256; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    t[i] = x;
  }
  return t;
})();

/** The end offsets of the chunks of `data` (the last is data.length). */
export function chunkEnds(data: Uint8Array): number[] {
  const ends: number[] = [];
  const n = data.length;
  let start = 0;
  while (start < n) {
    const limit = Math.min(n, start + MAX_CHUNK);
    let i = Math.min(n, start + MIN_CHUNK);
    let h = 0;
    let cut = limit;
    for (; i < limit; i++) {
      h = ((h << 1) + GEAR[data[i]]) >>> 0;
      if ((h & CUT_MASK) === 0) {
        cut = i + 1;
        break;
      }
    }
    ends.push(cut);
    start = cut;
  }
  return ends;
}
