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

/**
 * A piece or run of address space as plain numbers (no bigint per piece:
 * the sweep makes millions): IPv4 bounds in w[0] and w[4]; IPv6 bounds as
 * four u32 words each, start in w[0..3] and end in w[4..7], most
 * significant first.
 */
type Bounds = Uint32Array;

/** Changed space: IPv4 addresses, and IPv6 /64s counted once each even when several pieces of one /64 changed. */
class Space {
  v4 = 0;
  v6 = 0;
  private last0 = -1;
  private last1 = -1;

  add(family: Family, w: Bounds): void {
    if (family === 4) {
      this.v4 += w[4] - w[0] + 1;
      return;
    }
    this.v6 += slash64s(w) - (w[0] === this.last0 && w[1] === this.last1 ? 1 : 0);
    this.last0 = w[4];
    this.last1 = w[5];
  }

  body(): ChangedSpaceBody {
    return { ipv4_addresses: this.v4, ipv6_64s: this.v6 };
  }
}

const TWO_32 = 2 ** 32;
/** IPv6 /64s from the start's to the end's, inclusive. */
const slash64s = (w: Bounds) => (w[4] - w[0]) * TWO_32 + (w[5] - w[1]) + 1;

interface Run {
  family: Family;
  bounds: Bounds;
  before: FactValue;
  after: FactValue;
  /** IPv4 addresses or IPv6 /64s. */
  size: number;
}

/** The size a run is ranked by: IPv4 addresses, IPv6 /64s. */
const sizeOf = (family: Family, w: Bounds): number => (family === 4 ? w[4] - w[0] + 1 : slash64s(w));

/** One field group's counts, its current run, and its largest finished runs (per family, largest first). */
class FieldAccumulator {
  readonly changed = new Space();
  readonly flagged: Space | null;
  readonly unflagged: Space | null;
  /** The current run, reused for every run (a sweep has millions). */
  private readonly run: Run = { family: 4, bounds: new Uint32Array(8), before: null, after: null, size: 0 };
  private running = false;
  private readonly largest: { 4: Run[]; 6: Run[] } = { 4: [], 6: [] };

  constructor(
    readonly field: DiffField,
    private readonly top: number,
  ) {
    const isFlag = DIFF_FLAG_FIELDS.includes(field);
    this.flagged = isFlag ? new Space() : null;
    this.unflagged = isFlag ? new Space() : null;
  }

  piece(family: Family, w: Bounds, before: FactValue, after: FactValue): void {
    this.changed.add(family, w);
    if (this.flagged && after === true && before !== true) this.flagged.add(family, w);
    if (this.unflagged && before === true && after !== true) this.unflagged.add(family, w);
    const run = this.run;
    // Pieces come in address order and an unchanged piece ends the run, so a run's next piece is adjacent.
    if (this.running && run.family === family && run.before === before && run.after === after) {
      const b = run.bounds;
      b[4] = w[4];
      b[5] = w[5];
      b[6] = w[6];
      b[7] = w[7];
      return;
    }
    this.flush();
    this.running = true;
    run.family = family;
    run.bounds.set(w);
    run.before = before;
    run.after = after;
  }

  /** Ends the current run (a piece that did not change, or the end of a family). */
  flush(): void {
    if (!this.running) return;
    this.running = false;
    const run = this.run;
    const size = sizeOf(run.family, run.bounds);
    const list = this.largest[run.family];
    if (list.length >= this.top && list[list.length - 1].size >= size) return;
    let at = list.length;
    while (at > 0 && list[at - 1].size < size) at--;
    list.splice(at, 0, { ...run, bounds: run.bounds.slice(), size });
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
  const w = r.bounds;
  const start = r.family === 4 ? w[0] : wordsToBigInt(w, 0);
  const end = r.family === 4 ? w[4] : wordsToBigInt(w, 1);
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

/** The starts of one family of one index (mapped words), compared and copied in place. */
class Intervals {
  private readonly starts: Uint32Array;
  private readonly words: number;
  readonly count: number;
  constructor(
    private readonly reader: IndexReader,
    private readonly family: Family,
  ) {
    this.starts = reader.startsOf(family);
    this.words = family === 4 ? 1 : 4;
    this.count = this.starts.length / this.words;
  }
  /** Copies the start of interval i into out[at..]. */
  copyStart(i: number, out: Bounds, at: number): void {
    const n = this.words;
    for (let k = 0; k < n; k++) out[at + k] = this.starts[i * n + k];
  }
  /** Whether interval i starts at address 0. */
  startsAtZero(i: number): boolean {
    const n = this.words;
    for (let k = 0; k < n; k++) if (this.starts[i * n + k] !== 0) return false;
    return true;
  }
  /** start(i) compared with other.start(j): negative, 0 or positive. */
  compare(i: number, other: Intervals, j: number): number {
    const n = this.words;
    for (let k = 0; k < n; k++) {
      const d = this.starts[i * n + k] - other.starts[j * n + k];
      if (d !== 0) return d;
    }
    return 0;
  }
  recordId(i: number): number {
    if (i < 0) return -1;
    return this.family === 4 ? this.reader.v4RecordId(this.starts[i]) : this.reader.v6RecordIdAt(i);
  }
}

/** Decrements the address in out[at..at+n) (it is never the first address: a start past 0). */
function predecessor(out: Bounds, at: number, n: number): void {
  for (let k = n - 1; k >= 0; k--) {
    if (out[at + k] !== 0) {
      out[at + k]--;
      return;
    }
    out[at + k] = 0xffffffff;
  }
}

/** Pieces swept between two yields of the sweep (an async caller lets other work run there). */
const PIECES_PER_SLICE = 1 << 16;

/**
 * Sweeps one family of both indexes, feeding every changed piece to the
 * accumulators; yields every PIECES_PER_SLICE pieces. Interval starts are
 * compared in place; a piece's bounds are written (as words) only when
 * some field changed on it.
 */
function* sweepFamily(family: Family, oldR: IndexReader, newR: IndexReader, oldFacts: RecordFacts, newFacts: RecordFacts, acc: readonly FieldAccumulator[], at: readonly number[]): Generator<void, void> {
  const n = family === 4 ? 1 : 4;
  const a = new Intervals(oldR, family);
  const b = new Intervals(newR, family);
  // An index's intervals start at address 0; -1 stands for space before a first start (a file that does not).
  let i = a.count > 0 && a.startsAtZero(0) ? 0 : -1;
  let j = b.count > 0 && b.startsAtZero(0) ? 0 : -1;
  let factsA = oldFacts.of(a.recordId(i));
  let factsB = newFacts.of(b.recordId(j));
  const piece: Bounds = new Uint32Array(8);
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
      let made = false;
      for (let k = 0; k < acc.length; k++) {
        const f = at[k];
        if (factsA[f] === factsB[f]) {
          acc[k].flush();
          continue;
        }
        if (!made) {
          made = true;
          if (startAt === 0) piece.fill(0, 0, 4);
          else if (startAt === 'a') a.copyStart(i, piece, 0);
          else b.copyStart(j, piece, 0);
          if (order === null) piece.fill(0xffffffff, 4, 4 + n);
          else {
            if (order <= 0) a.copyStart(i + 1, piece, 4);
            else b.copyStart(j + 1, piece, 4);
            predecessor(piece, 4, n);
          }
        }
        acc[k].piece(family, piece, factsA[f], factsB[f]);
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
