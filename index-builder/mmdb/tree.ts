/**
 * MaxMind DB search tree: metadata, and an in-order walk that enumerates
 * every network holding data (mmdb-lib only answers point lookups).
 */
import type { Addr, Family } from '../../src/net/ip.ts';
import { MmdbDecoder, MmdbFormatError, type MmdbValue } from './decoder.ts';

/** The metadata fields the walker relies on. */
export interface MmdbMetadata {
  nodeCount: number;
  recordSize: 24 | 28 | 32;
  ipVersion: 4 | 6;
  databaseType: string;
  /** When the database was built (seconds since the epoch), if the metadata says. */
  buildEpoch?: number;
}

/** An opened database: bytes, metadata and a decoder over its data section. */
export interface MmdbDatabase {
  buf: Uint8Array;
  metadata: MmdbMetadata;
  decoder: MmdbDecoder;
  /** Byte length of the data section (data offsets must stay below it). */
  dataSize: number;
}

const METADATA_MARKER = Buffer.from([0xab, 0xcd, 0xef, ...Buffer.from('MaxMind.com')]);
/** The spec bounds the metadata block at 128 KiB from the end of the file. */
const METADATA_MAX = 128 * 1024;
/** Zero bytes between the search tree and the data section. */
const DATA_SEPARATOR = 16;

/** Reads the metadata and checks the layout; throws MmdbFormatError when it is not an MMDB. */
export function openMmdb(buf: Uint8Array): MmdbDatabase {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const from = Math.max(0, b.length - METADATA_MAX);
  const at = b.lastIndexOf(METADATA_MARKER);
  if (at < from || at < 0) throw new MmdbFormatError('no MaxMind DB metadata marker');
  const metaStart = at + METADATA_MARKER.length;
  const raw = new MmdbDecoder(buf, metaStart).decode(0);
  const metadata = readMetadata(raw);
  const treeSize = (metadata.nodeCount * metadata.recordSize * 2) / 8;
  const dataStart = treeSize + DATA_SEPARATOR;
  if (dataStart > at) throw new MmdbFormatError(`search tree (${treeSize} bytes) does not fit before the metadata`);
  return { buf, metadata, decoder: new MmdbDecoder(buf, dataStart), dataSize: at - dataStart };
}

function readMetadata(raw: MmdbValue): MmdbMetadata {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || raw instanceof Uint8Array) {
    throw new MmdbFormatError('metadata is not a map');
  }
  const nodeCount = raw.node_count;
  const recordSize = raw.record_size;
  const ipVersion = raw.ip_version;
  if (typeof nodeCount !== 'number' || nodeCount <= 0) throw new MmdbFormatError('metadata lacks node_count');
  if (recordSize !== 24 && recordSize !== 28 && recordSize !== 32) {
    throw new MmdbFormatError(`unsupported record_size ${String(recordSize)}`);
  }
  if (ipVersion !== 4 && ipVersion !== 6) throw new MmdbFormatError(`unsupported ip_version ${String(ipVersion)}`);
  const databaseType = typeof raw.database_type === 'string' ? raw.database_type : '';
  const buildEpoch = typeof raw.build_epoch === 'number' || typeof raw.build_epoch === 'bigint' ? Number(raw.build_epoch) : undefined;
  return { nodeCount, recordSize, ipVersion, databaseType, buildEpoch };
}

/** Receives one maximal range whose addresses all map to the same data offset. */
export type NetworkHandler = (family: Family, start: Addr, end: Addr, dataOffset: number) => void;

/**
 * Receives an IPv6 range as four u32 words per bound (most significant
 * first); the arrays are reused, valid only during the call.
 */
export type Words6Handler = (start: Uint32Array, end: Uint32Array, dataOffset: number) => void;

/**
 * Walks the whole tree in address order and reports ranges with data,
 * coalescing adjacent networks that share a data offset. In an IPv6
 * database the IPv4 subtree (::/96) is reported as family 4, and alias
 * subtrees that point back to it (::ffff:0:0/96, 2002::/16) are skipped.
 */
export function walkNetworks(db: MmdbDatabase, onRange: NetworkHandler, onRange6?: Words6Handler): void {
  const walker = new TreeWalker(db, onRange, onRange6);
  walker.run();
}

class TreeWalker {
  private readonly nodeCount: number;
  private readonly readRecord: (node: number, right: boolean) => number;
  /** Node at ::/96 in an IPv6 tree (the IPv4 root), or -1. */
  private ipv4Root = -1;
  // The pending range being coalesced (one family at a time); -1: none.
  private pendOffset = -1;
  private pendFamily: Family = 4;
  private pendStart = 0;
  private pendEnd = 0;
  // IPv6 bounds stay as 32-bit words (most significant first) until a range
  // is flushed, so coalesced neighbours cost no bigint allocations.
  private readonly path = new Uint32Array(4);
  private readonly start6 = new Uint32Array(4);
  private readonly end6 = new Uint32Array(4);
  private readonly pendStart6 = new Uint32Array(4);
  private readonly pendEnd6 = new Uint32Array(4);
  private readonly scratch = new DataView(new ArrayBuffer(16));

  constructor(
    private readonly db: MmdbDatabase,
    private readonly onRange: NetworkHandler,
    private readonly onRange6?: Words6Handler,
  ) {
    this.nodeCount = db.metadata.nodeCount;
    this.readRecord = recordReader(db.buf, db.metadata.recordSize);
  }

  run(): void {
    if (this.db.metadata.ipVersion === 4) {
      this.walk4(0, 0, 0);
      this.flush();
      return;
    }
    let node = 0;
    for (let d = 0; d < 96 && node < this.nodeCount; d++) node = this.readRecord(node, false);
    if (node < this.nodeCount) {
      this.ipv4Root = node;
      this.walk4(node, 0, 0);
      this.flush();
    }
    this.walk6(0, 0);
    this.flush();
  }

  private walk4(node: number, depth: number, prefix: number): void {
    if (depth === 32) throw new MmdbFormatError('search tree deeper than 32 bits for IPv4');
    const half = 2 ** (31 - depth);
    for (let side = 0; side < 2; side++) {
      const rec = this.readRecord(node, side === 1);
      const start = side === 1 ? prefix + half : prefix;
      if (rec < this.nodeCount) this.walk4(rec, depth + 1, start);
      else if (rec > this.nodeCount) this.emit4(start, start + half - 1, this.dataOffset(rec));
    }
  }

  private walk6(node: number, depth: number): void {
    if (depth === 128) throw new MmdbFormatError('search tree deeper than 128 bits');
    const word = depth >>> 5;
    const bit = 1 << (31 - (depth & 31));
    for (let side = 0; side < 2; side++) {
      const rec = this.readRecord(node, side === 1);
      if (side === 1) this.path[word] |= bit;
      else this.path[word] &= ~bit;
      if (rec < this.nodeCount) {
        // The IPv4 subtree was already reported as family 4; aliases point to it too.
        if (rec !== this.ipv4Root) this.walk6(rec, depth + 1);
      } else if (rec > this.nodeCount) {
        this.emit6(depth + 1, this.dataOffset(rec));
      }
    }
  }

  private dataOffset(rec: number): number {
    const off = rec - this.nodeCount - DATA_SEPARATOR;
    if (off < 0 || off >= this.db.dataSize) throw new MmdbFormatError(`record points outside the data section (${rec})`);
    return off;
  }

  private emit4(start: number, end: number, offset: number): void {
    if (offset === this.pendOffset && this.pendFamily === 4 && start === this.pendEnd + 1) {
      this.pendEnd = end;
      return;
    }
    this.flush();
    this.pendFamily = 4;
    this.pendOffset = offset;
    this.pendStart = start;
    this.pendEnd = end;
  }

  /** Reports the current path as a /len IPv6 network. */
  private emit6(len: number, offset: number): void {
    const p = this.path;
    const s = this.start6;
    const e = this.end6;
    for (let w = 0; w < 4; w++) {
      const keep = len - w * 32;
      const mask = keep >= 32 ? 0xffffffff : keep <= 0 ? 0 : ~((1 << (32 - keep)) - 1) >>> 0;
      s[w] = (p[w] & mask) >>> 0;
      e[w] = (s[w] | ~mask) >>> 0;
    }
    if (offset === this.pendOffset && this.pendFamily === 6 && followsPending(this.pendEnd6, s)) {
      this.pendEnd6.set(e);
      return;
    }
    this.flush();
    this.pendFamily = 6;
    this.pendOffset = offset;
    this.pendStart6.set(s);
    this.pendEnd6.set(e);
  }

  private flush(): void {
    if (this.pendOffset < 0) return;
    if (this.pendFamily === 6 && this.onRange6) {
      this.onRange6(this.pendStart6, this.pendEnd6, this.pendOffset);
    } else if (this.pendFamily === 6) {
      this.onRange(6, wordsToBigint(this.pendStart6, this.scratch), wordsToBigint(this.pendEnd6, this.scratch), this.pendOffset);
    } else {
      this.onRange(4, this.pendStart, this.pendEnd, this.pendOffset);
    }
    this.pendOffset = -1;
  }
}

/** True when `start` is the address right after `end` (128-bit values as words). */
function followsPending(end: Uint32Array, start: Uint32Array): boolean {
  let carry = 1;
  for (let w = 3; w >= 0; w--) {
    const sum = end[w] + carry;
    carry = sum > 0xffffffff ? 1 : 0;
    if (sum >>> 0 !== start[w]) return false;
  }
  return carry === 0;
}

/** Four 32-bit words (most significant first) as a bigint. */
function wordsToBigint(words: Uint32Array, view: DataView): bigint {
  view.setUint32(0, words[0]);
  view.setUint32(4, words[1]);
  view.setUint32(8, words[2]);
  view.setUint32(12, words[3]);
  return (view.getBigUint64(0) << 64n) | view.getBigUint64(8);
}

/** A reader of left/right records for the database's record size. */
function recordReader(b: Uint8Array, recordSize: 24 | 28 | 32): (node: number, right: boolean) => number {
  const nodeBytes = (recordSize * 2) / 8;
  const limit = b.length;
  const check = (base: number): void => {
    if (base + nodeBytes > limit) throw new MmdbFormatError(`node at byte ${base} is past the end of the file`);
  };
  if (recordSize === 24) {
    return (node, right) => {
      const base = node * 6 + (right ? 3 : 0);
      check(node * 6);
      return (b[base] << 16) | (b[base + 1] << 8) | b[base + 2];
    };
  }
  if (recordSize === 28) {
    return (node, right) => {
      const base = node * 7;
      check(base);
      if (right) return ((b[base + 3] & 0x0f) << 24) | (b[base + 4] << 16) | (b[base + 5] << 8) | b[base + 6];
      return ((b[base + 3] & 0xf0) << 20) | (b[base] << 16) | (b[base + 1] << 8) | b[base + 2];
    };
  }
  return (node, right) => {
    const base = node * 8 + (right ? 4 : 0);
    check(node * 8);
    return ((b[base] << 24) | (b[base + 1] << 16) | (b[base + 2] << 8) | b[base + 3]) >>> 0;
  };
}
