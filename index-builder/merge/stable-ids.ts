/**
 * Stable ids across builds: a build given the previous index numbers its
 * rows (records, sub-table rows) so that a row equal to one of the previous
 * file keeps that row's id, a new row takes the id of a vanished one (a
 * hole) and only then appends. A few changed rows then change a few rows of
 * the file, instead of shifting the id every later row and interval refers to.
 *
 * Matching is by a 64-bit hash of the row's words and is not checked word
 * by word: the content written at an id is always the new build's own row,
 * so a (vanishingly rare) false match only costs delta bytes, never an answer.
 */

/** Two 32-bit hashes (murmur3-style mixing, different seeds) of `width` words from `at`; the second is in `hashHigh`. */
let hashHigh = 0;
function hashPair(words: ArrayLike<number>, at: number, width: number): number {
  let a = 0x9747b28c;
  let b = 0x2f6b1c3d;
  for (let k = 0; k < width; k++) {
    const w = words[at + k] >>> 0;
    let v = Math.imul(w, 0xcc9e2d51);
    v = (v << 15) | (v >>> 17);
    a ^= Math.imul(v, 0x1b873593);
    a = (a << 13) | (a >>> 19);
    a = (Math.imul(a, 5) + 0xe6546b64) | 0;
    let u = Math.imul(w ^ 0x5bd1e995, 0x85ebca6b);
    u = (u << 17) | (u >>> 15);
    b ^= Math.imul(u, 0xc2b2ae35);
    b = (b << 11) | (b >>> 21);
    b = (Math.imul(b, 9) + 0x7fb5d329) | 0;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b ^= b >>> 15;
  b = Math.imul(b, 0x2c1b3c6d);
  b ^= b >>> 12;
  hashHigh = b >>> 0;
  return (a ^ (a >>> 16)) >>> 0;
}

/** The previous file's rows of one table, by hash: which previous id a row's content had. */
export class PreviousRows {
  private readonly keys: Uint32Array;
  private readonly ids: Int32Array;
  private readonly mask: number;

  /** `rows`: how many rows will be added (the table is sized once, at most 3/4 full). */
  constructor(
    readonly width: number,
    rows: number,
  ) {
    let slots = 16;
    while (slots * 0.75 < rows) slots *= 2;
    this.keys = new Uint32Array(slots * 2);
    this.ids = new Int32Array(slots).fill(-1);
    this.mask = slots - 1;
  }

  /** Files previous row `id`, whose words are `words[at .. at + width)`; a repeated content keeps its first id. */
  add(words: ArrayLike<number>, at: number, id: number): void {
    const lo = hashPair(words, at, this.width);
    const hi = hashHigh;
    let slot = lo & this.mask;
    for (;;) {
      const found = this.ids[slot];
      if (found < 0) break;
      if (this.keys[2 * slot] === lo && this.keys[2 * slot + 1] === hi) return;
      slot = (slot + 1) & this.mask;
    }
    this.keys[2 * slot] = lo;
    this.keys[2 * slot + 1] = hi;
    this.ids[slot] = id;
  }

  /** The previous id of a row with these words, or -1. */
  find(words: ArrayLike<number>, at: number): number {
    const lo = hashPair(words, at, this.width);
    const hi = hashHigh;
    let slot = lo & this.mask;
    for (;;) {
      const found = this.ids[slot];
      if (found < 0) return -1;
      if (this.keys[2 * slot] === lo && this.keys[2 * slot + 1] === hi) return found;
      slot = (slot + 1) & this.mask;
    }
  }
}

/** Where each new row goes in the file. */
export interface IdAssignment {
  /** ids[r]: the file id of build row r (ids[0] = 0: row 0 means "none"). */
  ids: Uint32Array;
  /** Rows in the file: at least the previous file's, so no previous id is reused for something else unseen. */
  count: number;
  /** taken[p] for p below the previous count: whether a new row sits at previous id p (else the previous row stays, dead). */
  taken: Uint8Array;
  /** New rows that kept their previous id. */
  kept: number;
  /** Previous ids no new row took (garbage carried into the file). */
  dead: number;
}

/**
 * Assigns file ids to `newCount` build rows given a previous table of
 * `previousCount` rows: `previousIdOf(r)` is the previous id of row r's
 * content, or -1. Matched rows keep their id (the first row to claim an id
 * gets it), the others fill the unclaimed previous ids in ascending order,
 * then append.
 */
export function assignIds(newCount: number, previousCount: number, previousIdOf: (r: number) => number): IdAssignment {
  const UNSET = 0xffffffff;
  const ids = new Uint32Array(Math.max(newCount, 1));
  const taken = new Uint8Array(Math.max(previousCount, 1));
  taken[0] = 1;
  let kept = 0;
  for (let r = 1; r < newCount; r++) {
    const p = previousIdOf(r);
    if (p > 0 && p < previousCount && !taken[p]) {
      ids[r] = p;
      taken[p] = 1;
      kept++;
    } else ids[r] = UNSET;
  }
  let hole = 1;
  let next = Math.max(previousCount, 1);
  for (let r = 1; r < newCount; r++) {
    if (ids[r] !== UNSET) continue;
    while (hole < previousCount && taken[hole]) hole++;
    if (hole < previousCount) {
      ids[r] = hole;
      taken[hole] = 1;
    } else ids[r] = next++;
  }
  let dead = 0;
  for (let p = 1; p < previousCount; p++) if (!taken[p]) dead++;
  return { ids, count: next, taken, kept, dead };
}
