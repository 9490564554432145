/**
 * Addresses as u32 words in typed columns: one word per IPv4 address, four
 * (most significant first) per IPv6 address, the order the file's start
 * sections use. Row i of a column of width w occupies [i * w, (i + 1) * w).
 * The merge compares and steps addresses in place, so an IPv6 range costs
 * 32 bytes of a column instead of two heap BigInts.
 */
import { wordsToBigInt, type Addr, type Family } from '../../src/net/ip.ts';
import type { GrowableU32 } from './growable.ts';

/** Words per address of a family. */
export function widthOf(family: Family): 1 | 4 {
  return family === 4 ? 1 : 4;
}

const scratch = new DataView(new ArrayBuffer(16));

/** Appends an address's words to a column. */
export function pushAddr(col: GrowableU32, family: Family, addr: Addr): void {
  if (family === 4) {
    col.push(addr as number);
    return;
  }
  const v = addr as bigint;
  scratch.setBigUint64(0, v >> 64n);
  // setBigUint64 keeps the low 64 bits itself: no second BigInt for the mask.
  scratch.setBigUint64(8, v);
  for (let k = 0; k < 16; k += 4) col.push(scratch.getUint32(k));
}

/** The address of row i of a column (a number for IPv4, a BigInt for IPv6). */
export function addrAt(col: Uint32Array, i: number, w: number): Addr {
  return w === 1 ? col[i] : wordsToBigInt(col, i);
}

/** Compares row i of a with row j of b: negative, 0 or positive. */
export function compareAt(a: Uint32Array, i: number, b: Uint32Array, j: number, w: number): number {
  if (w === 1) return a[i] - b[j];
  const x = i * 4;
  const y = j * 4;
  for (let k = 0; k < 4; k++) {
    const d = a[x + k] - b[y + k];
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether row j of b is row i of a plus one (adjacent addresses). */
export function isNextAt(a: Uint32Array, i: number, b: Uint32Array, j: number, w: number): boolean {
  if (w === 1) return a[i] + 1 === b[j];
  const x = i * 4;
  const y = j * 4;
  // a + 1 = b: the words above the lowest carry are equal, the carry word is one more, the rest roll from ~0 to 0.
  let k = 3;
  while (k >= 0 && a[x + k] === 0xffffffff && b[y + k] === 0) k--;
  if (k < 0 || a[x + k] + 1 !== b[y + k]) return false;
  for (let m = 0; m < k; m++) if (a[x + m] !== b[y + m]) return false;
  return true;
}

/** Whether row i is the family's last address (all ones). */
export function isLastAt(a: Uint32Array, i: number, w: number): boolean {
  const x = i * w;
  for (let k = 0; k < w; k++) if (a[x + k] !== 0xffffffff) return false;
  return true;
}

/** Copies row i of src into row j of dst. */
export function copyAt(src: Uint32Array, i: number, dst: Uint32Array, j: number, w: number): void {
  const x = i * w;
  const y = j * w;
  for (let k = 0; k < w; k++) dst[y + k] = src[x + k];
}

/** dst[j] = src[i] + delta (delta is 1 or -1; wraps around like u128/u32). */
export function stepAt(src: Uint32Array, i: number, dst: Uint32Array, j: number, w: number, delta: 1 | -1): void {
  const x = i * w;
  const y = j * w;
  let carry: number = delta;
  for (let k = w - 1; k >= 0; k--) {
    const v = src[x + k] + carry;
    dst[y + k] = v >>> 0;
    carry = v > 0xffffffff ? 1 : v < 0 ? -1 : 0;
  }
}

/** dst[j] = a[i] - b[i] (row by row, the same index in both). */
export function subtractAt(a: Uint32Array, b: Uint32Array, i: number, dst: Uint32Array, j: number, w: number): void {
  const x = i * w;
  const y = j * w;
  let borrow = 0;
  for (let k = w - 1; k >= 0; k--) {
    const v = a[x + k] - b[x + k] - borrow;
    dst[y + k] = v >>> 0;
    borrow = v < 0 ? 1 : 0;
  }
}
