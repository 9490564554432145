/**
 * Lazy, cached decoding of the string table and the fixed-width sub-tables
 * of a mapped index.
 */

/**
 * Strings decoded on first use and kept in a bounded cache; id 0 reads as
 * null. Bounded (2^16 slots, direct-mapped) rather than one slot per string:
 * an index holds over a million strings, and one array that large, written on
 * every new string, is rescanned whole by each young-generation collection
 * (pauses of 4-7 ms on a busy server; 2-3 ms bounded, BENCHMARKS.md) while
 * its strings pile up for the life of the process.
 */
export class StringReader {
  private readonly cache = new DirectMappedCache<string>(16);
  /** The string bytes as a Buffer: toString decodes a range natively, with no subarray made per string (cheaper than TextDecoder). */
  private readonly text: Buffer;
  // Bound once: a closure per call would allocate on every miss.
  private readonly decodeId = (id: number) => this.text.toString('utf8', this.offsets[id], this.offsets[id + 1]);

  constructor(
    private readonly offsets: Uint32Array,
    bytes: Uint8Array,
  ) {
    this.text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get count(): number {
    return this.offsets.length - 1;
  }

  /** The string with this id, or null for 0 / out of range. */
  get(id: number): string | null {
    if (id === 0 || id >= this.offsets.length - 1) return null;
    return this.cache.get(id, this.decodeId);
  }
}

type Row = Record<string, string | number | null>;

/** A fixed-width u32 table whose rows decode to plain objects by column layout. */
export class TableReader {
  readonly width: number;
  readonly rows: number;
  private readonly f32: Float32Array;
  private readonly names: string[];
  private readonly kinds: string[];

  constructor(
    private readonly u32: Uint32Array,
    layout: readonly string[],
    private readonly strings: StringReader,
  ) {
    this.width = layout.length;
    this.rows = this.width === 0 ? 0 : Math.floor(u32.length / this.width);
    this.f32 = new Float32Array(u32.buffer, u32.byteOffset, u32.length);
    this.kinds = layout.map((c) => c[0]);
    this.names = layout.map((c) => c.slice(2));
  }

  /** A raw u32 cell. */
  cell(row: number, col: number): number {
    return this.u32[row * this.width + col];
  }

  /** Decodes one row (strings resolved, f32 NaN -> null). */
  row(row: number): Row {
    const out: Row = {};
    const base = row * this.width;
    for (let c = 0; c < this.width; c++) {
      const k = this.kinds[c];
      if (k === 's') out[this.names[c]] = this.strings.get(this.u32[base + c]);
      else if (k === 'f') {
        const v = this.f32[base + c];
        // f32 storage: round to 4 decimals (about 10 m), the precision the feeds carry.
        out[this.names[c]] = Number.isNaN(v) ? null : Math.round(v * 1e4) / 1e4;
      } else out[this.names[c]] = this.u32[base + c];
    }
    return out;
  }
}

/**
 * A fixed number of slots holding JS values, stored as many small arrays of
 * 64 rather than one large one. The collector remembers an old array written
 * with a young value as a whole and rescans every element at the next young
 * collection: a busy server writes a few hundred random slots of its caches
 * between two collections, which dirtied every element of one 2^17-slot array
 * but dirties only those few chunks here (shorter young collections;
 * BENCHMARKS.md, "Measured changes in the code").
 */
export class ChunkedSlots<V> {
  private readonly chunks: (V | undefined)[][];

  constructor(readonly size: number) {
    // Every chunk is the one shared empty chunk until its first write: allocating them all up front cost each index
    // open (a reader's caches, a serving snapshot's memos) ~3-6 µs a chunk, ~20 ms of each worker's start.
    this.chunks = new Array<(V | undefined)[]>(Math.ceil(size / CHUNK)).fill(EMPTY_CHUNK as (V | undefined)[]);
  }

  /** The value in `slot` (0 <= slot < size). */
  get(slot: number): V | undefined {
    return this.chunks[slot >>> CHUNK_BITS][slot & (CHUNK - 1)];
  }

  set(slot: number, value: V | undefined): void {
    let chunk = this.chunks[slot >>> CHUNK_BITS];
    if (chunk === EMPTY_CHUNK) chunk = this.chunks[slot >>> CHUNK_BITS] = new Array<V | undefined>(CHUNK);
    chunk[slot & (CHUNK - 1)] = value;
  }

  /** Empties every slot. */
  clear(): void {
    this.chunks.fill(EMPTY_CHUNK as (V | undefined)[]);
  }
}

const CHUNK_BITS = 6;
const CHUNK = 1 << CHUNK_BITS;
/** What every ChunkedSlots reads from slots never written; never written itself (set replaces it first). */
const EMPTY_CHUNK: readonly unknown[] = new Array<unknown>(CHUNK);

/**
 * A direct-mapped cache of decoded rows keyed by row id: slot = id mod size.
 * Bounded memory, O(1) with no hashing, and a hot row stays until another
 * row maps to its slot; much cheaper than a Map on the lookup path.
 */
export class DirectMappedCache<V> {
  private readonly keys: Int32Array;
  private readonly values: ChunkedSlots<V>;
  private readonly mask: number;

  constructor(bits: number) {
    const size = 1 << bits;
    this.keys = new Int32Array(size).fill(-1);
    this.values = new ChunkedSlots<V>(size);
    this.mask = size - 1;
  }

  /** The cached value of `id`, or the computed one (then cached in its slot). */
  get(id: number, compute: (id: number) => V): V {
    const slot = id & this.mask;
    if (this.keys[slot] === id) return this.values.get(slot) as V;
    const v = compute(id);
    this.keys[slot] = id;
    this.values.set(slot, v);
    return v;
  }
}
