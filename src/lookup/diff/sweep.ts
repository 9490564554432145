/**
 * What changed between two indexes: one merged sweep over both files'
 * interval starts (mapped, never copied), family by family. Each piece of
 * address space between two consecutive starts of either file has one
 * record on each side; every field group whose value differs counts the
 * piece (IPv4 addresses, IPv6 /64s) and extends the current changed run,
 * and finished runs compete for the N largest. Memory is bounded by N and
 * the facts cache (facts.ts), whatever the size of the indexes.
 */
import { DIFF_FIELDS, DIFF_FLAG_FIELDS, type ChangedRangeBody, type ChangedSpaceBody, type DiffField, type FieldDiffBody, type IndexDiffBody } from '../../contract/diff.ts';
import type { IndexReader } from '../../index/reader.ts';
import { formatCidr, formatIp, rangeToCidrs, wordsToBigInt, type Family } from '../../net/ip.ts';
import { FIELD_INDEX, RecordFacts, type FactValue } from './facts.ts';

export interface DiffOptions {
  /** The groups to compare (default: all). */
  fields?: readonly DiffField[];
  /** Largest changed ranges kept per group and family (default 10). */
  top?: number;
  /** Paths shown in the answer. */
  oldPath?: string;
  newPath?: string;
}

const V4_MAX = 0xffffffff;
const V6_MAX = (1n << 128n) - 1n;

/** The address before a start (never the first address: a start past 0). */
const predecessor = (p: Pos): Pos => (typeof p === 'number' ? p - 1 : p - 1n);

/** An address: a number for IPv4, a bigint for IPv6. */
type Pos = number | bigint;

/** Changed space: IPv4 addresses, and IPv6 /64s counted once each even when several pieces of one /64 changed. */
class Space {
  v4 = 0;
  v6 = 0;
  private last64 = -1n;

  add(start: Pos, end: Pos): void {
    if (typeof start === 'number') {
      this.v4 += (end as number) - start + 1;
      return;
    }
    const first = start >> 64n;
    const last = (end as bigint) >> 64n;
    this.v6 += Number(last - first) + (first === this.last64 ? 0 : 1);
    this.last64 = last;
  }

  body(): ChangedSpaceBody {
    return { ipv4_addresses: this.v4, ipv6_64s: this.v6 };
  }
}

interface Run {
  family: Family;
  start: Pos;
  end: Pos;
  before: FactValue;
  after: FactValue;
  /** IPv4 addresses or IPv6 /64s, set when the run ends. */
  size: number;
}

/** The size a run is ranked by: IPv4 addresses, IPv6 /64s. */
const sizeOf = (r: Run): number => (typeof r.start === 'number' ? (r.end as number) - r.start + 1 : Number(((r.end as bigint) >> 64n) - (r.start >> 64n)) + 1);

/** One field group's counts, its current run, and its largest finished runs (per family, largest first). */
class FieldAccumulator {
  readonly changed = new Space();
  readonly flagged: Space | null;
  readonly unflagged: Space | null;
  private run: Run | null = null;
  private readonly largest: { 4: Run[]; 6: Run[] } = { 4: [], 6: [] };

  constructor(
    readonly field: DiffField,
    private readonly top: number,
  ) {
    const isFlag = DIFF_FLAG_FIELDS.includes(field);
    this.flagged = isFlag ? new Space() : null;
    this.unflagged = isFlag ? new Space() : null;
  }

  piece(family: Family, start: Pos, end: Pos, before: FactValue, after: FactValue): void {
    this.changed.add(start, end);
    if (this.flagged && after === true && before !== true) this.flagged.add(start, end);
    if (this.unflagged && before === true && after !== true) this.unflagged.add(start, end);
    const run = this.run;
    // Pieces come in address order and an unchanged piece ends the run, so a run's next piece is adjacent.
    if (run && run.family === family && run.before === before && run.after === after) {
      run.end = end;
      return;
    }
    this.flush();
    this.run = { family, start, end, before, after, size: 0 };
  }

  /** Ends the current run (a piece that did not change, or the end of a family). */
  flush(): void {
    const run = this.run;
    if (run === null) return;
    this.run = null;
    run.size = sizeOf(run);
    const list = this.largest[run.family];
    if (list.length >= this.top && list[list.length - 1].size >= run.size) return;
    let at = list.length;
    while (at > 0 && list[at - 1].size < run.size) at--;
    list.splice(at, 0, run);
    if (list.length > this.top) list.pop();
  }

  body(): FieldDiffBody {
    this.flush();
    const largest = [...this.largest[4], ...this.largest[6]].map((r) => rangeBody(this.field, r));
    const out: FieldDiffBody = { field: this.field, changed: this.changed.body(), largest };
    if (this.flagged) out.flagged = this.flagged.body();
    if (this.unflagged) out.unflagged = this.unflagged.body();
    return out;
  }
}

/** A value as the answer shows it (facts.ts keeps the routing origin as a number). */
const shown = (field: DiffField, v: FactValue): FactValue => (field === 'routing_origin' && typeof v === 'number' ? `AS${v}` : v);

/** A run as the answer shows it. */
function rangeBody(field: DiffField, r: Run): ChangedRangeBody {
  const { start, end } = r;
  const cidrs = rangeToCidrs(r.family, start, end);
  return {
    family: r.family,
    range: `${formatIp(r.family, start)} - ${formatIp(r.family, end)}`,
    cidr: cidrs.length === 1 ? formatCidr(r.family, cidrs[0].start, cidrs[0].len) : null,
    size: r.size,
    before: shown(field, r.before),
    after: shown(field, r.after),
  };
}

/** The starts of one family of one index (mapped words), compared in place; a bigint only when a piece is reported. */
class Intervals {
  private readonly starts: Uint32Array;
  readonly count: number;
  constructor(
    private readonly reader: IndexReader,
    private readonly family: Family,
  ) {
    this.starts = reader.startsOf(family);
    this.count = family === 4 ? this.starts.length : this.starts.length / 4;
  }
  start(i: number): Pos {
    return this.family === 4 ? this.starts[i] : wordsToBigInt(this.starts, i);
  }
  /** Whether interval i starts at address 0. */
  startsAtZero(i: number): boolean {
    const s = this.starts;
    return this.family === 4 ? s[i] === 0 : s[i * 4] === 0 && s[i * 4 + 1] === 0 && s[i * 4 + 2] === 0 && s[i * 4 + 3] === 0;
  }
  /** start(i) compared with other.start(j): negative, 0 or positive. */
  compare(i: number, other: Intervals, j: number): number {
    const s = this.starts;
    const o = other.starts;
    if (this.family === 4) return s[i] - o[j];
    for (let k = 0; k < 4; k++) {
      const d = s[i * 4 + k] - o[j * 4 + k];
      if (d !== 0) return d;
    }
    return 0;
  }
  recordId(i: number): number {
    if (i < 0) return -1;
    return this.family === 4 ? this.reader.v4RecordId(this.starts[i]) : this.reader.v6RecordIdAt(i);
  }
}

/** Pieces swept between two yields of the sweep (an async caller lets other work run there). */
const PIECES_PER_SLICE = 1 << 16;

/**
 * Sweeps one family of both indexes, feeding every changed piece to the
 * accumulators; yields every PIECES_PER_SLICE pieces. The loop compares
 * interval starts in place; a piece's bounds are made (as bigints) only
 * when some field changed on it.
 */
function* sweepFamily(family: Family, oldR: IndexReader, newR: IndexReader, oldFacts: RecordFacts, newFacts: RecordFacts, acc: readonly FieldAccumulator[], at: readonly number[]): Generator<void, void> {
  const max: Pos = family === 4 ? V4_MAX : V6_MAX;
  const a = new Intervals(oldR, family);
  const b = new Intervals(newR, family);
  // An index's intervals start at address 0; -1 stands for space before a first start (a file that does not).
  let i = a.count > 0 && a.startsAtZero(0) ? 0 : -1;
  let j = b.count > 0 && b.startsAtZero(0) ? 0 : -1;
  let factsA = oldFacts.of(a.recordId(i));
  let factsB = newFacts.of(b.recordId(j));
  // Where the current piece starts: address 0, the start of a's interval i, or of b's interval j.
  let startAt: 0 | 'a' | 'b' = 0;
  let pieces = 0;
  for (;;) {
    if (++pieces === PIECES_PER_SLICE) {
      pieces = 0;
      yield;
    }
    const hasA = i + 1 < a.count;
    const hasB = j + 1 < b.count;
    // Which side's next start ends the piece: < 0 a's, > 0 b's, 0 both; null: neither (the piece runs to the end).
    const order = hasA ? (hasB ? a.compare(i + 1, b, j + 1) : -1) : hasB ? 1 : null;
    if (factsA !== factsB) {
      let start: Pos = -1;
      let end: Pos = -1;
      for (let k = 0; k < acc.length; k++) {
        const f = at[k];
        if (factsA[f] === factsB[f]) {
          acc[k].flush();
          continue;
        }
        if (start === -1) {
          start = startAt === 0 ? (family === 4 ? 0 : 0n) : startAt === 'a' ? a.start(i) : b.start(j);
          end = order === null ? max : predecessor(order <= 0 ? a.start(i + 1) : b.start(j + 1));
        }
        acc[k].piece(family, start, end, factsA[f], factsB[f]);
      }
    } else for (const x of acc) x.flush();
    if (order === null) break;
    if (order <= 0) {
      i++;
      factsA = oldFacts.of(a.recordId(i));
      startAt = 'a';
    }
    if (order >= 0) {
      j++;
      factsB = newFacts.of(b.recordId(j));
      if (order > 0) startAt = 'b';
    }
  }
  for (const x of acc) x.flush();
}

/** The whole comparison as a generator: it yields between slices of the sweep, then returns the answer. */
function* comparing(oldR: IndexReader, newR: IndexReader, options: DiffOptions): Generator<void, IndexDiffBody> {
  const started = performance.now();
  const fields = options.fields ?? DIFF_FIELDS;
  const top = options.top ?? 10;
  const acc = fields.map((f) => new FieldAccumulator(f, top));
  const at = fields.map((f) => FIELD_INDEX[f]);
  const oldFacts = new RecordFacts(oldR);
  const newFacts = new RecordFacts(newR);
  for (const family of [4, 6] as const) yield* sweepFamily(family, oldR, newR, oldFacts, newFacts, acc, at);
  return {
    old: { path: options.oldPath ?? oldR.file.path, built_at: oldR.meta.builtAt },
    new: { path: options.newPath ?? newR.file.path, built_at: newR.meta.builtAt },
    fields: acc.map((x) => x.body()),
    seconds: Math.round((performance.now() - started) / 10) / 100,
  };
}

/** Compares two indexes (see the file comment), at once. */
export function diffIndexes(oldR: IndexReader, newR: IndexReader, options: DiffOptions = {}): IndexDiffBody {
  const run = comparing(oldR, newR, options);
  for (;;) {
    const step = run.next();
    if (step.done) return step.value;
  }
}

/** diffIndexes in slices, letting the event loop run between them (a serving process compares without stalling its requests). */
export async function diffIndexesInSlices(oldR: IndexReader, newR: IndexReader, options: DiffOptions = {}): Promise<IndexDiffBody> {
  const run = comparing(oldR, newR, options);
  for (;;) {
    const step = run.next();
    if (step.done) return step.value;
    await new Promise<void>((done) => setImmediate(done));
  }
}
