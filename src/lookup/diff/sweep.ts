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

const V4_MAX = 0xffffffffn;
const V6_MAX = (1n << 128n) - 1n;

/** Changed space: IPv4 addresses, and IPv6 /64s counted once each even when several pieces of one /64 changed. */
class Space {
  v4 = 0;
  v6 = 0;
  private last64 = -1n;

  add(family: Family, start: bigint, end: bigint): void {
    if (family === 4) {
      this.v4 += Number(end - start) + 1;
      return;
    }
    const first = start >> 64n;
    const last = end >> 64n;
    this.v6 += Number(last - first) + (first === this.last64 ? 0 : 1);
    this.last64 = last;
  }

  body(): ChangedSpaceBody {
    return { ipv4_addresses: this.v4, ipv6_64s: this.v6 };
  }
}

interface Run {
  family: Family;
  start: bigint;
  end: bigint;
  before: FactValue;
  after: FactValue;
}

/** The size a run is ranked by: IPv4 addresses, IPv6 /64s. */
const sizeOf = (r: Run): number => (r.family === 4 ? Number(r.end - r.start) + 1 : Number((r.end >> 64n) - (r.start >> 64n)) + 1);

/** One field group's counts, its current run, and its largest finished runs. */
class FieldAccumulator {
  readonly changed = new Space();
  readonly flagged: Space | null;
  readonly unflagged: Space | null;
  private run: Run | null = null;
  private readonly largest: Run[] = [];

  constructor(
    readonly field: DiffField,
    private readonly top: number,
  ) {
    const isFlag = DIFF_FLAG_FIELDS.includes(field);
    this.flagged = isFlag ? new Space() : null;
    this.unflagged = isFlag ? new Space() : null;
  }

  piece(family: Family, start: bigint, end: bigint, before: FactValue, after: FactValue): void {
    this.changed.add(family, start, end);
    if (this.flagged && after === true && before !== true) this.flagged.add(family, start, end);
    if (this.unflagged && before === true && after !== true) this.unflagged.add(family, start, end);
    const run = this.run;
    if (run && run.family === family && run.end + 1n === start && run.before === before && run.after === after) {
      run.end = end;
      return;
    }
    this.flush();
    this.run = { family, start, end, before, after };
  }

  /** Ends the current run (a piece that did not change, or the end of a family). */
  flush(): void {
    const run = this.run;
    if (run === null) return;
    this.run = null;
    const size = sizeOf(run);
    const list = this.largest;
    const ofFamily = list.filter((r) => r.family === run.family);
    if (ofFamily.length >= this.top && sizeOf(ofFamily[ofFamily.length - 1]) >= size) return;
    let at = list.length;
    while (at > 0 && (list[at - 1].family > run.family || (list[at - 1].family === run.family && sizeOf(list[at - 1]) < size))) at--;
    list.splice(at, 0, run);
    if (ofFamily.length + 1 > this.top) {
      // Drop the smallest of this family (the last of its family in the list).
      let last = -1;
      for (let k = 0; k < list.length; k++) if (list[k].family === run.family) last = k;
      list.splice(last, 1);
    }
  }

  body(): FieldDiffBody {
    this.flush();
    const out: FieldDiffBody = { field: this.field, changed: this.changed.body(), largest: this.largest.map(rangeBody) };
    if (this.flagged) out.flagged = this.flagged.body();
    if (this.unflagged) out.unflagged = this.unflagged.body();
    return out;
  }
}

/** A run as the answer shows it. */
function rangeBody(r: Run): ChangedRangeBody {
  const start = r.family === 4 ? Number(r.start) : r.start;
  const end = r.family === 4 ? Number(r.end) : r.end;
  const cidrs = rangeToCidrs(r.family, start, end);
  return {
    family: r.family,
    range: `${formatIp(r.family, start)} - ${formatIp(r.family, end)}`,
    cidr: cidrs.length === 1 ? formatCidr(r.family, cidrs[0].start, cidrs[0].len) : null,
    size: sizeOf(r),
    before: r.before,
    after: r.after,
  };
}

/** The starts of one family of one index as a stream of bigints, with each interval's record id. */
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
  start(i: number): bigint {
    return this.family === 4 ? BigInt(this.starts[i]) : wordsToBigInt(this.starts, i);
  }
  recordId(i: number): number {
    if (i < 0) return -1;
    return this.family === 4 ? this.reader.v4RecordId(this.starts[i]) : this.reader.v6RecordIdAt(i);
  }
}

/** Pieces swept between two yields of the sweep (an async caller lets other work run there). */
const PIECES_PER_SLICE = 1 << 16;

/** Sweeps one family of both indexes, feeding every changed piece to the accumulators; yields every PIECES_PER_SLICE pieces. */
function* sweepFamily(family: Family, oldR: IndexReader, newR: IndexReader, oldFacts: RecordFacts, newFacts: RecordFacts, acc: readonly FieldAccumulator[], at: readonly number[]): Generator<void, void> {
  const max = family === 4 ? V4_MAX : V6_MAX;
  const a = new Intervals(oldR, family);
  const b = new Intervals(newR, family);
  // An index's intervals start at address 0; -1 stands for space before a first start (a file that does not).
  let i = a.count > 0 && a.start(0) === 0n ? 0 : -1;
  let j = b.count > 0 && b.start(0) === 0n ? 0 : -1;
  let nextA = i + 1 < a.count ? a.start(i + 1) : max + 1n;
  let nextB = j + 1 < b.count ? b.start(j + 1) : max + 1n;
  let factsA = oldFacts.of(a.recordId(i));
  let factsB = newFacts.of(b.recordId(j));
  let cur = 0n;
  let pieces = 0;
  for (;;) {
    if (++pieces === PIECES_PER_SLICE) {
      pieces = 0;
      yield;
    }
    const end = (nextA < nextB ? nextA : nextB) - 1n;
    if (factsA !== factsB) {
      for (let k = 0; k < acc.length; k++) {
        const f = at[k];
        if (factsA[f] !== factsB[f]) acc[k].piece(family, cur, end, factsA[f], factsB[f]);
        else acc[k].flush();
      }
    } else for (const x of acc) x.flush();
    if (end >= max) break;
    cur = end + 1n;
    if (cur === nextA) {
      i++;
      nextA = i + 1 < a.count ? a.start(i + 1) : max + 1n;
      factsA = oldFacts.of(a.recordId(i));
    }
    if (cur === nextB) {
      j++;
      nextB = j + 1 < b.count ? b.start(j + 1) : max + 1n;
      factsB = newFacts.of(b.recordId(j));
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
