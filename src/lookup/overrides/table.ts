/**
 * The operator's overrides as a compact interval table, apart from the
 * mapped index so they change without a rebuild. Prefixes nest or are
 * disjoint, so they flatten into disjoint intervals, each naming the most
 * specific override covering it. Per family: sorted starts, ends and entry
 * ids in typed arrays (IPv6 as four u32 words each), found by binary search;
 * the distinct field sets pooled as JSON text (field-pool.ts). Every array
 * is in shared memory: a table built once per host (load-thread.ts) passes
 * to every worker whole, without a copy (toParts / fromParts).
 */
import { embeddedIPv4Words, formatCidr, parseIPv4, parseIPv6Groups, wordsToBigInt, type Family } from '../../net/ip.ts';
import type { OverrideEntry, OverrideFields } from '../../contract/overrides.ts';
import { FieldPool, toShared, type FieldPoolParts } from './field-pool.ts';

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

/** A table's memory, as posted between threads (every array in shared memory). */
export interface OverrideTableParts {
  pool: FieldPoolParts;
  set: Uint32Array;
  len: Uint8Array;
  family: Uint8Array;
  startOf: Uint32Array;
  v6Starts: Uint32Array;
  v4: FamilyIntervals;
  v6: FamilyIntervals;
}

const sharedIntervals = (f: FamilyIntervals): FamilyIntervals => ({ starts: toShared(f.starts), ends: toShared(f.ends), entries: toShared(f.entries) });

const groups = new Uint16Array(8);

/** Immutable overrides, built once per load. */
export class OverrideTable {
  /** Per entry: its field set, family, prefix length, and start (IPv4: word; IPv6: index into v6Starts/4). */
  private readonly fieldSetOf: Uint32Array;
  private readonly lenOf: Uint8Array;
  private readonly familyOf: Uint8Array;
  private readonly startOf: Uint32Array;
  private readonly entryStartsV6: Uint32Array;

  private constructor(
    private readonly pool: FieldPool,
    kept: Omit<Kept, 'count'>,
    private readonly v4: FamilyIntervals,
    private readonly v6: FamilyIntervals,
  ) {
    this.fieldSetOf = kept.set;
    this.lenOf = kept.len;
    this.familyOf = kept.family;
    this.startOf = kept.startOf;
    this.entryStartsV6 = kept.v6Starts;
  }

  private static empty: OverrideTable | undefined;

  /** No overrides (made on first use: built at class definition, it would meet OverrideColumns, declared below, uninitialised in a bundle). */
  static get EMPTY(): OverrideTable {
    return (OverrideTable.empty ??= OverrideTable.build([]));
  }

  /**
   * Builds the table from accepted entries. Two entries with the same prefix:
   * the later line wins (its line is returned in `replaced`).
   */
  static build(entries: readonly OverrideEntry[]): OverrideTable {
    return OverrideTable.buildReporting(entries).table;
  }

  /** Like build, also returning the lines of entries a later entry of the same prefix replaced. */
  static buildReporting(entries: readonly OverrideEntry[]): { table: OverrideTable; replaced: Array<{ line: number; by: number }> } {
    const columns = new OverrideColumns();
    for (const e of entries) columns.add(e);
    return OverrideTable.fromColumns(columns);
  }

  /** The table of entries gathered in columns (a load's way: no object per entry). */
  static fromColumns(c: OverrideColumns): { table: OverrideTable; replaced: Array<{ line: number; by: number }> } {
    const { kept, replaced } = lastOfEachPrefix(c);
    const v4 = sharedIntervals(flatten(kept, 4));
    const v6 = sharedIntervals(flatten(kept, 6));
    const shared = { family: toShared(kept.family), len: toShared(kept.len), set: toShared(kept.set), startOf: toShared(kept.startOf), v6Starts: toShared(kept.v6Starts) };
    return { table: new OverrideTable(FieldPool.of(c.fieldSets), shared, v4, v6), replaced };
  }

  /** The table over memory another thread built (toParts there): nothing is copied. */
  static fromParts(p: OverrideTableParts): OverrideTable {
    return new OverrideTable(new FieldPool(p.pool), { family: p.family, len: p.len, set: p.set, startOf: p.startOf, v6Starts: p.v6Starts }, p.v4, p.v6);
  }

  /** The table's memory, to post to another thread. */
  toParts(): OverrideTableParts {
    return { pool: this.pool.parts, set: this.fieldSetOf, len: this.lenOf, family: this.familyOf, startOf: this.startOf, v6Starts: this.entryStartsV6, v4: this.v4, v6: this.v6 };
  }

  /** Number of entries. */
  get size(): number {
    return this.lenOf.length;
  }

  /** Flattened interval counts per family. */
  get intervalCounts(): { v4: number; v6: number } {
    return { v4: this.v4.entries.length, v6: this.v6.entries.length };
  }

  /** Bytes the table holds: its typed arrays and the pooled text of its field sets (all of it, once per host). */
  get byteLength(): number {
    const fam = (f: FamilyIntervals) => f.starts.byteLength + f.ends.byteLength + f.entries.byteLength;
    return fam(this.v4) + fam(this.v6) + this.fieldSetOf.byteLength + this.lenOf.byteLength + this.familyOf.byteLength + this.startOf.byteLength + this.entryStartsV6.byteLength + this.pool.byteLength;
  }

  /** Distinct field sets. */
  get fieldSetCount(): number {
    return this.pool.size;
  }

  /** How much address space the overrides cover (the union of their prefixes), per family. */
  get coverage(): { v4: number; v6: bigint } {
    let v4 = 0;
    const a = this.v4;
    for (let i = 0; i < a.entries.length; i++) v4 += a.ends[i] - a.starts[i] + 1;
    let v6 = 0n;
    const b = this.v6;
    for (let i = 0; i < b.entries.length; i++) v6 += wordsToBigInt(b.ends, i) - wordsToBigInt(b.starts, i) + 1n;
    return { v4, v6 };
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
      const fields = this.pool.get(this.fieldSetOf[id]);
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
    return { id, cidr: this.cidrOf(id), fields: this.pool.get(this.fieldSetOf[id]) };
  }

  private cidrOf(id: number): string {
    if (this.familyOf[id] === 4) return formatCidr(4, this.startOf[id], this.lenOf[id]);
    return formatCidr(6, wordsToBigInt(this.entryStartsV6, this.startOf[id]), this.lenOf[id]);
  }
}

/**
 * Accepted entries in columns, as a load reads them: 26 bytes an entry
 * (the start as four words, IPv4 in the first), fields shared by identity.
 */
export class OverrideColumns {
  count = 0;
  family = new Uint8Array(1024);
  len = new Uint8Array(1024);
  line = new Uint32Array(1024);
  set = new Uint32Array(1024);
  start = new Uint32Array(4096);
  readonly fieldSets: Readonly<OverrideFields>[] = [];
  /** Characters of the distinct field sets' JSON text (what the table's pool will hold, for ASCII text). */
  textChars = 0;
  private readonly ids = new Map<Readonly<OverrideFields>, number>();

  /** Appends an entry (its fields object is kept once per distinct object: the reader shares identical ones). */
  add(e: OverrideEntry): void {
    if (this.count === this.family.length) this.grow();
    const i = this.count++;
    this.family[i] = e.family;
    this.len[i] = e.len;
    this.line[i] = e.line;
    let id = this.ids.get(e.fields);
    if (id === undefined) {
      id = this.fieldSets.length;
      this.ids.set(e.fields, id);
      this.fieldSets.push(Object.isFrozen(e.fields) ? e.fields : Object.freeze({ ...e.fields }));
      this.textChars += JSON.stringify(e.fields).length + 4;
    }
    this.set[i] = id;
    if (e.family === 4) this.start[i * 4] = e.start as number;
    else writeWords(this.start, i, e.start as bigint);
  }

  private grow(): void {
    const more = <T extends Uint8Array | Uint32Array>(a: T, n: number): T => {
      const b = new (a.constructor as { new (n: number): T })(n);
      b.set(a);
      return b;
    };
    const n = this.family.length * 2;
    this.family = more(this.family, n);
    this.len = more(this.len, n);
    this.line = more(this.line, n);
    this.set = more(this.set, n);
    this.start = more(this.start, n * 4);
  }
}

/** The entries a table keeps, in order (family, start, prefix length), in columns. */
interface Kept {
  count: number;
  family: Uint8Array;
  len: Uint8Array;
  set: Uint32Array;
  /** IPv4: the start; IPv6: the index of its four words in v6Starts. */
  startOf: Uint32Array;
  v6Starts: Uint32Array;
}

/**
 * One entry per prefix (the later line wins), sorted by family, start and
 * prefix length: one sort of entry numbers over the columns, no object or
 * map key per entry.
 */
function lastOfEachPrefix(c: OverrideColumns): { kept: Kept; replaced: Array<{ line: number; by: number }> } {
  const order = new Uint32Array(c.count);
  for (let i = 0; i < c.count; i++) order[i] = i;
  const w = c.start;
  order.sort((x, y) => {
    const d = c.family[x] - c.family[y];
    if (d !== 0) return d;
    for (let k = 0; k < 4; k++) {
      const dw = w[x * 4 + k] - w[y * 4 + k];
      if (dw !== 0) return dw;
    }
    return c.len[x] - c.len[y] || x - y;
  });
  const same = (x: number, y: number) => c.family[x] === c.family[y] && c.len[x] === c.len[y] && w[x * 4] === w[y * 4] && w[x * 4 + 1] === w[y * 4 + 1] && w[x * 4 + 2] === w[y * 4 + 2] && w[x * 4 + 3] === w[y * 4 + 3];
  const replaced: Array<{ line: number; by: number }> = [];
  const keep: number[] = [];
  for (let k = 0; k < order.length; k++) {
    const i = order[k];
    const last = keep.length > 0 ? keep[keep.length - 1] : -1;
    if (last >= 0 && same(last, i)) {
      replaced.push({ line: c.line[last], by: c.line[i] });
      keep[keep.length - 1] = i;
    } else keep.push(i);
  }
  const n = keep.length;
  const kept: Kept = { count: n, family: new Uint8Array(n), len: new Uint8Array(n), set: new Uint32Array(n), startOf: new Uint32Array(n), v6Starts: new Uint32Array(0) };
  let v6 = 0;
  for (const i of keep) if (c.family[i] === 6) v6++;
  kept.v6Starts = new Uint32Array(v6 * 4);
  let k6 = 0;
  for (let k = 0; k < n; k++) {
    const i = keep[k];
    kept.family[k] = c.family[i];
    kept.len[k] = c.len[i];
    kept.set[k] = c.set[i];
    if (c.family[i] === 4) kept.startOf[k] = w[i * 4];
    else {
      kept.v6Starts.set(w.subarray(i * 4, i * 4 + 4), k6 * 4);
      kept.startOf[k] = k6++;
    }
  }
  return { kept, replaced };
}

/**
 * Disjoint intervals of one family, each with its most specific entry: a
 * sweep over the kept prefixes (sorted by start, broader first) with the
 * stack of prefixes open at the cursor. IPv4 in numbers, IPv6 in bigints.
 */
function flatten(kept: Kept, family: Family): FamilyIntervals {
  const ids: number[] = [];
  for (let i = 0; i < kept.count; i++) if (kept.family[i] === family) ids.push(i);
  if (ids.length === 0) return EMPTY;
  if (family === 4) {
    const startOf = (id: number) => kept.startOf[id];
    return flattenWith(ids, 4, 0, 1, startOf, (id) => startOf(id) + 2 ** (32 - kept.len[id]) - 1);
  }
  const startOf = (id: number) => wordsToBigInt(kept.v6Starts, kept.startOf[id]);
  return flattenWith<bigint>(ids, 6, 0n, 1n, startOf, (id) => startOf(id) | ((1n << BigInt(128 - kept.len[id])) - 1n));
}

function flattenWith<P extends number | bigint>(ids: number[], family: Family, zero: P, one: P, startOf: (id: number) => P, endOf: (id: number) => P): FamilyIntervals {
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
  // Each open prefix with its end (computed once).
  const stack: Array<{ id: number; end: P }> = [];
  let cursor = zero;
  for (const id of ids) {
    const s = startOf(id);
    while (stack.length > 0 && stack[stack.length - 1].end < s) {
      const top = stack.pop()!;
      emit(cursor, top.end, top.id);
      cursor = add(top.end, one);
    }
    if (stack.length > 0) emit(cursor, sub(s, one), stack[stack.length - 1].id);
    stack.push({ id, end: endOf(id) });
    cursor = s;
  }
  while (stack.length > 0) {
    const top = stack.pop()!;
    emit(cursor, top.end, top.id);
    cursor = add(top.end, one);
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
