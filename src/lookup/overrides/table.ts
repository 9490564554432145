/**
 * The operator's overrides as a compact interval table, apart from the
 * mapped index so they change without a rebuild. Prefixes nest or are
 * disjoint, so they flatten into disjoint intervals, each naming the most
 * specific override covering it. Per family: sorted starts, ends and entry
 * ids in typed arrays (IPv6 as four u32 words each), found by binary search;
 * the fields of identical overrides are one shared object.
 */
import { embeddedIPv4Words, formatCidr, parseIPv4, parseIPv6Groups, wordsToBigInt, type Family } from '../../net/ip.ts';
import type { OverrideEntry, OverrideFields } from '../../contract/overrides.ts';

/** The override that answers an address. */
export interface OverrideMatch {
  /** Entry number in the table. */
  readonly id: number;
  readonly cidr: string;
  readonly fields: Readonly<OverrideFields>;
}

/** One family's flattened intervals (IPv4: a word each; IPv6: four words each, most significant first). */
interface FamilyIntervals {
  starts: Uint32Array;
  ends: Uint32Array;
  entries: Uint32Array;
}

const EMPTY: FamilyIntervals = { starts: new Uint32Array(0), ends: new Uint32Array(0), entries: new Uint32Array(0) };

const groups = new Uint16Array(8);

/** Immutable overrides, built once per load. */
export class OverrideTable {
  /** Per entry: its field set, family, prefix length, and start (IPv4: word; IPv6: index into v6Starts/4). */
  private readonly fieldSetOf: Uint32Array;
  private readonly lenOf: Uint8Array;
  private readonly familyOf: Uint8Array;
  private readonly startOf: Float64Array;
  private readonly entryStartsV6: Uint32Array;

  private constructor(
    private readonly fieldSets: readonly Readonly<OverrideFields>[],
    entryFieldSets: Uint32Array,
    private readonly v4: FamilyIntervals,
    private readonly v6: FamilyIntervals,
    entries: readonly OverrideEntry[],
  ) {
    const n = entries.length;
    this.fieldSetOf = entryFieldSets;
    this.lenOf = new Uint8Array(n);
    this.familyOf = new Uint8Array(n);
    this.startOf = new Float64Array(n);
    const v6count = entries.reduce((c, e) => c + (e.family === 6 ? 1 : 0), 0);
    this.entryStartsV6 = new Uint32Array(v6count * 4);
    let k = 0;
    for (let i = 0; i < n; i++) {
      const e = entries[i];
      this.lenOf[i] = e.len;
      this.familyOf[i] = e.family;
      if (e.family === 4) this.startOf[i] = e.start as number;
      else {
        writeWords(this.entryStartsV6, k, e.start as bigint);
        this.startOf[i] = k++;
      }
    }
  }

  /** No overrides. */
  static readonly EMPTY = OverrideTable.build([]);

  /**
   * Builds the table from accepted entries. Two entries with the same prefix:
   * the later line wins (its line is returned in `replaced`).
   */
  static build(entries: readonly OverrideEntry[]): OverrideTable {
    return OverrideTable.buildReporting(entries).table;
  }

  /** Like build, also returning the lines of entries a later entry of the same prefix replaced. */
  static buildReporting(entries: readonly OverrideEntry[]): { table: OverrideTable; replaced: Array<{ line: number; by: number }> } {
    const { kept, replaced } = lastOfEachPrefix(entries);
    const { fieldSets, setOf } = sharedFieldSets(kept);
    return { table: new OverrideTable(fieldSets, setOf, flatten(kept, 4), flatten(kept, 6), kept), replaced };
  }

  /** Number of entries. */
  get size(): number {
    return this.lenOf.length;
  }

  /** Flattened interval counts per family. */
  get intervalCounts(): { v4: number; v6: number } {
    return { v4: this.v4.entries.length, v6: this.v6.entries.length };
  }

  /** Bytes of the typed arrays (the field sets are counted apart: they are ordinary objects). */
  get arrayBytes(): number {
    const fam = (f: FamilyIntervals) => f.starts.byteLength + f.ends.byteLength + f.entries.byteLength;
    return fam(this.v4) + fam(this.v6) + this.fieldSetOf.byteLength + this.lenOf.byteLength + this.familyOf.byteLength + this.startOf.byteLength + this.entryStartsV6.byteLength;
  }

  /** Distinct field sets. */
  get fieldSetCount(): number {
    return this.fieldSets.length;
  }

  /** The most specific override covering an address text; null when none (or not an address). */
  find(ip: string): OverrideMatch | null {
    if (this.lenOf.length === 0) return null;
    if (ip.indexOf(':') < 0) {
      const x = parseIPv4(ip);
      return x < 0 ? null : this.findV4(x);
    }
    if (!parseIPv6Groups(ip, groups)) return null;
    const w0 = ((groups[0] << 16) | groups[1]) >>> 0;
    const w1 = ((groups[2] << 16) | groups[3]) >>> 0;
    const w2 = ((groups[4] << 16) | groups[5]) >>> 0;
    const w3 = ((groups[6] << 16) | groups[7]) >>> 0;
    const v4 = embeddedIPv4Words(w0, w1, w2, w3);
    return v4 >= 0 ? this.findV4(v4) : this.findV6(w0, w1, w2, w3);
  }

  /** The override of an IPv4 number. */
  findV4(x: number): OverrideMatch | null {
    const { starts, ends, entries } = this.v4;
    let lo = 0;
    let hi = starts.length - 1;
    if (hi < 0 || starts[0] > x) return null;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid] <= x) lo = mid;
      else hi = mid - 1;
    }
    return x <= ends[lo] ? this.match(entries[lo]) : null;
  }

  /** The override of an IPv6 address given as four words. */
  findV6(w0: number, w1: number, w2: number, w3: number): OverrideMatch | null {
    const { starts, ends, entries } = this.v6;
    let lo = 0;
    let hi = entries.length - 1;
    if (hi < 0 || !wordsLE(starts, 0, w0, w1, w2, w3)) return null;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (wordsLE(starts, mid, w0, w1, w2, w3)) lo = mid;
      else hi = mid - 1;
    }
    return wordsGE(ends, lo, w0, w1, w2, w3) ? this.match(entries[lo]) : null;
  }

  /**
   * A family's flattened intervals in address order (for exports): starts,
   * inclusive ends (IPv6: four words each) and entry ids.
   */
  intervals(family: Family): Readonly<FamilyIntervals> {
    return family === 4 ? this.v4 : this.v6;
  }

  /** The entries again (line numbers are not kept: 0), to combine two tables into one. */
  toEntries(): OverrideEntry[] {
    const out: OverrideEntry[] = [];
    for (let id = 0; id < this.lenOf.length; id++) {
      const len = this.lenOf[id];
      const fields = this.fieldSets[this.fieldSetOf[id]];
      if (this.familyOf[id] === 4) {
        const start = this.startOf[id];
        out.push({ family: 4, start, end: start + 2 ** (32 - len) - 1, len, fields, line: 0 });
      } else {
        const start = wordsToBigInt(this.entryStartsV6, this.startOf[id]);
        out.push({ family: 6, start, end: start | ((1n << BigInt(128 - len)) - 1n), len, fields, line: 0 });
      }
    }
    return out;
  }

  /** The override of an entry id. */
  match(id: number): OverrideMatch {
    return { id, cidr: this.cidrOf(id), fields: this.fieldSets[this.fieldSetOf[id]] };
  }

  private cidrOf(id: number): string {
    if (this.familyOf[id] === 4) return formatCidr(4, this.startOf[id], this.lenOf[id]);
    return formatCidr(6, wordsToBigInt(this.entryStartsV6, this.startOf[id]), this.lenOf[id]);
  }
}

/**
 * The entries with one per prefix (the later line wins), sorted by family,
 * start and prefix length: one sort, no map of a million keys.
 */
function lastOfEachPrefix(input: readonly OverrideEntry[]): { kept: OverrideEntry[]; replaced: Array<{ line: number; by: number }> } {
  const order = Array.from({ length: input.length }, (_, i) => i);
  // Starts of one family are all numbers or all bigints: compared as they are.
  order.sort((x, y) => {
    const a = input[x];
    const b = input[y];
    if (a.family !== b.family) return a.family - b.family;
    if (a.start !== b.start) return a.start < b.start ? -1 : 1;
    return a.len - b.len || x - y;
  });
  const kept: OverrideEntry[] = [];
  const replaced: Array<{ line: number; by: number }> = [];
  for (const i of order) {
    const e = input[i];
    const last = kept[kept.length - 1];
    if (last !== undefined && last.family === e.family && last.start === e.start && last.len === e.len) {
      replaced.push({ line: last.line, by: e.line });
      kept[kept.length - 1] = e;
    } else kept.push(e);
  }
  return { kept, replaced };
}

/** One object per distinct set of fields (entries already share them: overrides.ts), and each entry's set. */
function sharedFieldSets(kept: readonly OverrideEntry[]): { fieldSets: Readonly<OverrideFields>[]; setOf: Uint32Array } {
  const ids = new Map<Readonly<OverrideFields>, number>();
  const fieldSets: Readonly<OverrideFields>[] = [];
  const setOf = new Uint32Array(kept.length);
  for (let i = 0; i < kept.length; i++) {
    const f = kept[i].fields;
    let id = ids.get(f);
    if (id === undefined) {
      id = fieldSets.length;
      ids.set(f, id);
      fieldSets.push(Object.isFrozen(f) ? f : Object.freeze({ ...f }));
    }
    setOf[i] = id;
  }
  return { fieldSets, setOf };
}

/**
 * Disjoint intervals of one family, each with its most specific entry: a
 * sweep over the prefixes (sorted by start, broader first: lastOfEachPrefix)
 * with the stack of prefixes open at the cursor. IPv4 in numbers, IPv6 in
 * bigints.
 */
function flatten(entries: readonly OverrideEntry[], family: Family): FamilyIntervals {
  const ids: number[] = [];
  for (let i = 0; i < entries.length; i++) if (entries[i].family === family) ids.push(i);
  if (ids.length === 0) return EMPTY;
  return family === 4 ? flattenWith(entries, ids, 4, 0, 1) : flattenWith<bigint>(entries, ids, 6, 0n, 1n);
}

function flattenWith<P extends number | bigint>(entries: readonly OverrideEntry[], ids: number[], family: Family, zero: P, one: P): FamilyIntervals {
  const add = (x: P, y: P) => ((x as number) + (y as number)) as P;
  const sub = (x: P, y: P) => ((x as number) - (y as number)) as P;
  const words = family === 4 ? 1 : 4;
  let starts = new Uint32Array(ids.length * 2 * words + words);
  let ends = new Uint32Array(starts.length);
  let out = new Uint32Array(ids.length * 2 + 1);
  let count = 0;
  const put = (a: Uint32Array, i: number, v: P) => {
    if (family === 4) a[i] = v as number;
    else writeWords(a, i, v as bigint);
  };
  const emit = (s: P, e: P, id: number) => {
    if (s > e) return;
    put(starts, count, s);
    put(ends, count, e);
    out[count++] = id;
  };
  const stack: number[] = [];
  let cursor = zero;
  const endOf = (id: number) => entries[id].end as P;
  for (const id of ids) {
    const s = entries[id].start as P;
    while (stack.length > 0 && endOf(stack[stack.length - 1]) < s) {
      const top = stack.pop()!;
      emit(cursor, endOf(top), top);
      cursor = add(endOf(top), one);
    }
    if (stack.length > 0) emit(cursor, sub(s, one), stack[stack.length - 1]);
    stack.push(id);
    cursor = s;
  }
  while (stack.length > 0) {
    const top = stack.pop()!;
    emit(cursor, endOf(top), top);
    cursor = add(endOf(top), one);
  }
  starts = starts.slice(0, count * words);
  ends = ends.slice(0, count * words);
  out = out.slice(0, count);
  return { starts, ends, entries: out };
}

function writeWords(out: Uint32Array, i: number, v: bigint): void {
  out[i * 4] = Number((v >> 96n) & 0xffffffffn);
  out[i * 4 + 1] = Number((v >> 64n) & 0xffffffffn);
  out[i * 4 + 2] = Number((v >> 32n) & 0xffffffffn);
  out[i * 4 + 3] = Number(v & 0xffffffffn);
}

/** words(i) <= address. */
function wordsLE(s: Uint32Array, i: number, w0: number, w1: number, w2: number, w3: number): boolean {
  const b = i * 4;
  return s[b] < w0 || (s[b] === w0 && (s[b + 1] < w1 || (s[b + 1] === w1 && (s[b + 2] < w2 || (s[b + 2] === w2 && s[b + 3] <= w3)))));
}

/** words(i) >= address. */
function wordsGE(s: Uint32Array, i: number, w0: number, w1: number, w2: number, w3: number): boolean {
  const b = i * 4;
  return s[b] > w0 || (s[b] === w0 && (s[b + 1] > w1 || (s[b + 1] === w1 && (s[b + 2] > w2 || (s[b + 2] === w2 && s[b + 3] >= w3)))));
}
