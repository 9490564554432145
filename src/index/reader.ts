/**
 * The mapped index reader. IPv4: one read of the per-/24 direct table gives
 * the record id (or a small bucket to scan). IPv6: a hash of the /32 leads to
 * a direct table over the next bits (a record id, or an interval to scan
 * from); /32s without interval starts fall back to a binary search narrowed
 * by a first-level table. Then lazy, cached decoding of the record and its
 * sub-tables; interval bounds only when asked.
 */
import { embeddedIPv4Words, formatIPv4, formatIPv6Groups, parseIPv4, parseIPv6Groups, type Family } from '../net/ip.ts';
import {
  ASN_CATEGORY_BITS,
  ASN_DETAIL_DROP,
  Section,
  TableLayout,
  V4_DIRECT_BITS,
  V4_DIRECT_RECORD,
} from './format.ts';
import { IndexFileError, mapIndexFile, u32Section, type MappedIndex, type OpenOptions } from './map-index-file.ts';
import type { AsnDetails, IndexRecord, LookupHit } from './record.ts';
import { StringReader, TableReader } from './tables.ts';
import { RecordDecoder } from './record-decoder.ts';
import { V6Search } from './v6-search.ts';

/**
 * The groups of the IPv6 address being looked up, shared by every reader so
 * a lookup allocates nothing. Safe: a lookup fills it (locate) and reads it
 * back within one synchronous call, and each thread has its own module.
 */
const groups = new Uint16Array(8);
/** Word k (0..3, most significant first) of the IPv6 address last parsed into `groups`. */
const parsedWord = (k: number) => ((groups[2 * k] << 16) | groups[2 * k + 1]) >>> 0;

/** An opened, verified index answering lookups. */
export class IndexReader {
  readonly strings: StringReader;
  private readonly v4Starts: Uint32Array;
  private readonly v4L1: Uint32Array;
  private readonly v4Direct: Uint32Array;
  private readonly v4Buckets: Uint32Array;
  private readonly v4BucketBytes: Uint8Array;
  private readonly v6Starts: Uint32Array;
  private readonly v6Recs: Uint32Array;
  private readonly v6: V6Search;
  private readonly v4Shift: number;
  private readonly decoder: RecordDecoder;
  private readonly asnTable: TableReader;

  constructor(readonly file: MappedIndex) {
    this.strings = new StringReader(u32Section(file, Section.STRING_OFFSETS), file.sections.get(Section.STRING_BYTES)!.bytes);
    this.v4Starts = u32Section(file, Section.V4_STARTS);
    this.v4L1 = u32Section(file, Section.V4_L1);
    this.v4Direct = u32Section(file, Section.V4_DIRECT);
    if (this.v4Direct.length !== 2 ** V4_DIRECT_BITS) throw new IndexFileError(file.path, `IPv4 direct table has ${this.v4Direct.length} entries, expected 2^${V4_DIRECT_BITS}`);
    this.v4Buckets = u32Section(file, Section.V4_BUCKETS);
    this.v4BucketBytes = new Uint8Array(this.v4Buckets.buffer, this.v4Buckets.byteOffset, this.v4Buckets.byteLength);
    this.v6Starts = u32Section(file, Section.V6_STARTS);
    this.v6Recs = u32Section(file, Section.V6_RECORDS);
    const v6L1 = u32Section(file, Section.V6_L1);
    const v6Hash = u32Section(file, Section.V6_HASH);
    const hashBits = Math.log2(v6Hash.length / 2);
    if (!Number.isInteger(hashBits) || hashBits < 1 || hashBits > 30) throw new IndexFileError(file.path, `IPv6 hash of ${v6Hash.length} words is not 2 * 2^bits`);
    this.v6 = new V6Search(this.v6Starts, this.v6Recs, v6L1, l1Bits(file.path, v6L1), v6Hash, hashBits, u32Section(file, Section.V6_SUB));
    this.v4Shift = 32 - l1Bits(file.path, this.v4L1);
    this.decoder = new RecordDecoder(file, this.strings);
    this.asnTable = new TableReader(u32Section(file, Section.ASN_DETAILS), TableLayout[Section.ASN_DETAILS], this.strings);
  }

  /** Opens and verifies an index file (throws IndexFileError when refused). */
  static open(path: string, options?: OpenOptions): IndexReader {
    return new IndexReader(mapIndexFile(path, options));
  }

  get meta() {
    return this.file.meta;
  }

  get intervalCounts(): { v4: number; v6: number } {
    return { v4: this.v4Starts.length, v6: this.v6Recs.length };
  }

  /**
   * Every interval of a family in address order: starts (IPv4: one number
   * each; IPv6: four words each, most significant first) and record ids.
   * For exports (the MMDB writer); the lookup path never uses it.
   */
  intervals(family: Family): { starts: Uint32Array; recordIds: Uint32Array } {
    if (family === 6) return { starts: this.v6Starts, recordIds: this.v6Recs };
    const recordIds = new Uint32Array(this.v4Starts.length);
    for (let i = 0; i < recordIds.length; i++) recordIds[i] = this.v4RecordId(this.v4Starts[i]);
    return { starts: this.v4Starts, recordIds };
  }

  /**
   * The mapped interval starts of a family (IPv4: a word each; IPv6: four
   * words each), without copying: for streaming comparisons of two indexes
   * (record ids from v4RecordId, or v6RecordIdAt).
   */
  startsOf(family: Family): Uint32Array {
    return family === 4 ? this.v4Starts : this.v6Starts;
  }

  /** Record id of IPv6 interval `i`. */
  v6RecordIdAt(i: number): number {
    return this.v6Recs[i];
  }

  /**
   * Record id of an IPv4 number: one read of the /24's direct entry, plus a
   * scan of its bucket (one cache line, usually a few entries) for the few
   * /24s split between intervals.
   */
  v4RecordId(x: number): number {
    const e = this.v4Direct[x >>> (32 - V4_DIRECT_BITS)];
    if (e >= V4_DIRECT_RECORD) return e - V4_DIRECT_RECORD;
    const b = this.v4Buckets;
    const m = b[e];
    const bytes = this.v4BucketBytes;
    const at = (e + 1) * 4;
    const low = x & 0xff;
    // Starts ascend and the first is 0, so the scan stops inside the bucket.
    let i = m - 1;
    while (bytes[at + i] > low) i--;
    return b[e + 1 + ((m + 3) >>> 2) + i];
  }

  /** Interval index of an IPv4 number. */
  findV4(x: number): number {
    const top = x >>> this.v4Shift;
    let lo = this.v4L1[top];
    let hi = this.v4L1[top + 1];
    const s = this.v4Starts;
    // Last interval whose start <= x, within [lo, hi].
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (s[mid] <= x) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Interval index of an IPv6 address given as four u32 words. */
  findV6(w0: number, w1: number, w2: number, w3: number): number {
    return this.v6.find(w0, w1, w2, w3);
  }

  /** Record id of an IPv6 address given as four u32 words (v6-search.ts). */
  v6RecordId(w0: number, w1: number, w2: number, w3: number): number {
    return this.v6.recordId(w0, w1, w2, w3);
  }

  /** Record id for an address text, or -1 when the text is not an IP. No allocation. */
  recordIdOf(ip: string): number {
    const ref = this.locate(ip);
    if (ref < 0) return -1;
    if (ref >= V6_TAG) return this.v6RecordId(parsedWord(0), parsedWord(1), parsedWord(2), parsedWord(3));
    return this.v4RecordId(ref >= EMBEDDED_TAG ? ref - EMBEDDED_TAG : ref);
  }

  /**
   * Parses an address: an IPv4 number for IPv4 text, EMBEDDED_TAG + the
   * number for IPv4 inside IPv6 (mapped or compatible, net/ip.ts
   * embeddedIPv4Words: answered from the IPv4 family), V6_TAG for IPv6 (its
   * words are left in `groups`), or -1 for invalid text. IPv4 is tried
   * first: IPv6 text fails it at its length or first colon, and IPv4 text
   * is then read once, not scanned for a colon before.
   */
  private locate(ip: string): number {
    const v4 = parseIPv4(ip);
    if (v4 >= 0) return v4;
    if (!parseIPv6Groups(ip, groups)) return -1;
    const embedded = embeddedIPv4Words(parsedWord(0), parsedWord(1), parsedWord(2), parsedWord(3));
    return embedded < 0 ? V6_TAG : EMBEDDED_TAG + embedded;
  }

  /** Looks up an address text; null when it is not a valid IP. */
  lookup(ip: string): LookupHit | null {
    const ref = this.locate(ip);
    if (ref < 0) return null;
    // The interval (for the range text) is searched only when asked (Hit.range).
    if (ref < EMBEDDED_TAG) return new Hit(this, 4, ip, ref, this.v4RecordId(ref), 0, 0, 0);
    if (ref < V6_TAG) return new Hit(this, 4, null, ref - EMBEDDED_TAG, this.v4RecordId(ref - EMBEDDED_TAG), 0, 0, 0);
    const w0 = parsedWord(0);
    const w1 = parsedWord(1);
    const w2 = parsedWord(2);
    const w3 = parsedWord(3);
    const recordId = this.v6RecordId(w0, w1, w2, w3);
    // Canonical IPv6 text is formatted only when read (it costs as much as the search).
    return new Hit(this, 6, null, w0, recordId, w1, w2, w3);
  }

  /** First and last address of an interval, as text (computed on demand). */
  intervalText(family: Family, i: number): [string, string] {
    if (family === 4) {
      const end = i + 1 < this.v4Starts.length ? this.v4Starts[i + 1] - 1 : 0xffffffff;
      return [formatIPv4(this.v4Starts[i]), formatIPv4(end)];
    }
    return [this.v6WordsText(i), i + 1 < this.v6Recs.length ? this.v6PredText(i + 1) : 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'];
  }

  private v6Words(i: number): number[] {
    return Array.from(this.v6Starts.subarray(i * 4, i * 4 + 4));
  }

  private v6WordsText(i: number): string {
    return wordsText(this.v6Words(i));
  }

  /** Text of (start of interval i) - 1. */
  private v6PredText(i: number): string {
    const words = this.v6Words(i);
    for (let k = 3; k >= 0; k--) {
      if (words[k] > 0) {
        words[k]--;
        break;
      }
      words[k] = 0xffffffff;
    }
    return wordsText(words);
  }

  /** The decoded record of an id (cached while hot). */
  record(id: number): IndexRecord {
    return this.decoder.record(id);
  }

  /** The entries of the build's `overrides` sources as JSON lines (null when it had none): the lookup layer lays them over answers. */
  embeddedOverrides(): string | null {
    const s = this.file.sections.get(Section.OVERRIDES);
    return s ? new TextDecoder().decode(s.bytes) : null;
  }

  /** Per-ASN facts (binary search over the ASN details table); null when unknown. */
  asnDetails(asn: number): AsnDetails | null {
    const t = this.asnTable;
    let lo = 0;
    let hi = t.rows - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = t.cell(mid, 0);
      if (v === asn) return decodeAsnDetails(t.row(mid));
      if (v < asn) lo = mid + 1;
      else hi = mid - 1;
    }
    return null;
  }
}

/**
 * A lookup answer; the record, the address text, the interval and its bounds
 * are computed only when read (no array or string per lookup otherwise, and
 * an answer memoised by record id never reads the record's row).
 */
class Hit implements LookupHit {
  private bounds: [string, string] | null = null;
  private decoded: IndexRecord | null = null;
  constructor(
    private readonly reader: IndexReader,
    readonly family: Family,
    private ipText: string | null,
    /** IPv4: the address; IPv6: its most significant word (w1..w3 follow). */
    private readonly w0: number,
    readonly recordId: number,
    private readonly w1: number,
    private readonly w2: number,
    private readonly w3: number,
  ) {}

  get index(): object {
    return this.reader;
  }

  get record(): IndexRecord {
    return (this.decoded ??= this.reader.record(this.recordId));
  }

  get ip(): string {
    if (this.ipText !== null) return this.ipText;
    if (this.family === 4) return (this.ipText = formatIPv4(this.w0));
    return (this.ipText = wordsText([this.w0, this.w1, this.w2, this.w3]));
  }

  private get range(): [string, string] {
    if (this.bounds) return this.bounds;
    const r = this.reader;
    const i = this.family === 4 ? r.findV4(this.w0) : r.findV6(this.w0, this.w1, this.w2, this.w3);
    return (this.bounds = r.intervalText(this.family, i));
  }

  get rangeStart(): string {
    return this.range[0];
  }

  get rangeEnd(): string {
    return this.range[1];
  }

  /** Plain data for JSON and logs. */
  toJSON() {
    return { family: this.family, ip: this.ip, rangeStart: this.rangeStart, rangeEnd: this.rangeEnd, recordId: this.recordId, record: this.record };
  }
}

/** Canonical text of an IPv6 address given as four u32 words (most significant first). */
function wordsText(words: readonly number[]): string {
  const g = new Array<number>(8);
  for (let k = 0; k < 4; k++) {
    g[2 * k] = words[k] >>> 16;
    g[2 * k + 1] = words[k] & 0xffff;
  }
  return formatIPv6Groups(g);
}

/** Bits of a first-level table from its length (2^bits + 1 entries). */
function l1Bits(path: string, l1: Uint32Array): number {
  const bits = Math.log2(l1.length - 1);
  if (!Number.isInteger(bits) || bits < 1 || bits > 24) throw new IndexFileError(path, `first-level table of ${l1.length} entries is not 2^bits + 1`);
  return bits;
}

/** locate() offsets IPv4 found inside IPv6 text by this tag (its canonical text is then formatted, not the input)… */
const EMBEDDED_TAG = 2 ** 32;
/** …and answers IPv6 with this one. */
const V6_TAG = 2 ** 33;

function decodeAsnDetails(x: Record<string, string | number | null>): AsnDetails {
  const flags = x.flags as number;
  const dropped = (flags & ASN_DETAIL_DROP) !== 0;
  return {
    asn: x.asn as number,
    name: x.name as string | null,
    threatDensity: {
      threatNetworkCount: x.threatNetworkCount as number,
      threatIpv4Addresses: x.threatIpv4Addresses as number,
      totalIpv4Addresses: x.totalIpv4Addresses as number,
    },
    asnDrop: dropped
      ? {
          asn: `AS${x.asn}`,
          asName: x.dropAsName as string | null,
          rir: x.dropRir as string | null,
          domain: x.dropDomain as string | null,
          countryCode: x.dropCountryCode as string | null,
        }
      : null,
    categories: Object.entries(ASN_CATEGORY_BITS)
      .filter(([, bit]) => flags & bit)
      .map(([name]) => name),
  };
}
