/**
 * Builds the MaxMind DB search tree (format spec 2.0) of an IPv6 database
 * from ranges that cover each family's whole space in address order. The
 * tree is built top-down: a block of addresses that lies inside one range
 * becomes a leaf, any other block a node with two halves, so the tree is
 * minimal for the ranges given. The IPv4 space is the subtree at ::/96 (where
 * every MMDB reader looks IPv4 addresses up), and ::ffff:0:0/96 points to it
 * too (IPv4-mapped addresses answer as IPv4, as the index does).
 */

/** A leaf without data (the reader answers "not found"). */
export const NO_DATA = -1;

/** One family's ranges: range k starts at start(k) and ends where range k+1 starts; `data[k]` is a data-section offset or NO_DATA. */
export interface Ranges {
  /** IPv4: one number a range; IPv6: four 32-bit words a range, most significant first. */
  starts: ArrayLike<number>;
  data: ArrayLike<number>;
}

/** The serialized tree and the record size it uses. */
export interface SearchTree {
  bytes: Uint8Array;
  nodeCount: number;
  recordSize: 24 | 28 | 32;
}

/** Slots still to be pointed at the IPv4 subtree. */
const V4_SLOT = -0x80000000;

/** The alias prefixes (/96) of the IPv4 subtree in the IPv6 tree: ::/96 and ::ffff:0:0/96, as their third word. */
const V4_ALIAS_WORD2 = [0, 0xffff];

/** Nodes as pairs of child references: >= 0 a node, NO_DATA, -(offset + 2) data, V4_SLOT. */
class Nodes {
  kids = new Int32Array(1 << 16);
  count = 0;

  add(): number {
    if (2 * this.count + 2 > this.kids.length) {
      const next = new Int32Array(this.kids.length * 2);
      next.set(this.kids);
      this.kids = next;
    }
    return this.count++;
  }
}

const leaf = (data: number) => (data === NO_DATA ? NO_DATA : -(data + 2));

/** Builds the tree over IPv6 ranges with the IPv4 ranges as its ::/96 subtree; `dataSize` sizes the records. */
export function buildSearchTree(v4: Ranges, v6: Ranges, dataSize: number): SearchTree {
  const nodes = new Nodes();
  const root = nodes.add();
  new V6Builder(nodes, v6).fill(root);
  const v4Root = new V4Builder(nodes, v4).subtree();
  const kids = nodes.kids;
  for (let i = 0; i < 2 * nodes.count; i++) if (kids[i] === V4_SLOT) kids[i] = v4Root;
  return serialize(kids, nodes.count, dataSize);
}

class V4Builder {
  private i = 0;
  constructor(
    private readonly nodes: Nodes,
    private readonly ranges: Ranges,
  ) {}

  /** The reference of the whole IPv4 space: a node, or a leaf when one range covers it. */
  subtree(): number {
    return this.block(0, 0);
  }

  /** Block of 2^(32-depth) addresses from `start`; range `i` holds `start`. */
  private block(depth: number, start: number): number {
    const size = 2 ** (32 - depth);
    const next = start + size;
    const { starts, data } = this.ranges;
    const following = this.i + 1 < starts.length ? starts[this.i + 1] : 2 ** 32;
    if (following >= next) {
      const ref = leaf(data[this.i]);
      if (following === next) this.i++;
      return ref;
    }
    const node = this.nodes.add();
    const left = this.block(depth + 1, start);
    const right = this.block(depth + 1, start + size / 2);
    this.nodes.kids[2 * node] = left;
    this.nodes.kids[2 * node + 1] = right;
    return node;
  }
}

class V6Builder {
  private i = 0;
  /** Start of the current block, as words; bits past its depth are 0. */
  private readonly at = new Uint32Array(4);
  /** Address right after the current block (scratch). */
  private readonly next = new Uint32Array(4);
  private readonly count: number;

  constructor(
    private readonly nodes: Nodes,
    private readonly ranges: Ranges,
  ) {
    this.count = ranges.data.length;
  }

  /** Fills the root node (the root is always a node, as readers expect). */
  fill(root: number): void {
    this.children(root, 0);
  }

  private children(node: number, depth: number): void {
    const word = depth >>> 5;
    const bit = 1 << (31 - (depth & 31));
    const left = this.block(depth + 1);
    this.at[word] |= bit;
    const right = this.block(depth + 1);
    this.at[word] &= ~bit;
    this.nodes.kids[2 * node] = left;
    this.nodes.kids[2 * node + 1] = right;
  }

  /** The block of depth `depth` starting at `this.at`; range `i` holds its start. */
  private block(depth: number): number {
    const alias = this.aliasState(depth);
    if (alias === 'is') {
      this.skipPast(depth);
      return V4_SLOT;
    }
    if (alias === 'none') {
      const cmp = this.i + 1 < this.count ? this.compareNext(depth) : 1;
      if (cmp >= 0) {
        const ref = leaf(this.ranges.data[this.i]);
        if (cmp === 0) this.i++;
        return ref;
      }
    }
    const node = this.nodes.add();
    this.children(node, depth);
    return node;
  }

  /** Whether the block is an IPv4 alias, contains one (it must be split), or neither. */
  private aliasState(depth: number): 'is' | 'contains' | 'none' {
    if (depth > 96) return 'none';
    const a = this.at;
    if (a[0] !== 0 || (depth > 32 && a[1] !== 0)) return 'none';
    if (depth <= 64) return depth === 96 ? 'is' : 'contains';
    const keep = depth - 64;
    const mask = keep >= 32 ? 0xffffffff : ~((1 << (32 - keep)) - 1) >>> 0;
    for (const w2 of V4_ALIAS_WORD2) if (((w2 & mask) >>> 0) === a[2]) return depth === 96 ? 'is' : 'contains';
    return 'none';
  }

  /** Sets `next` to the first address after the block; false when the block ends the space. */
  private setNext(depth: number): boolean {
    const n = this.next;
    n.set(this.at);
    let w = (depth - 1) >>> 5;
    let add = 2 ** (31 - ((depth - 1) & 31));
    for (; w >= 0; w--) {
      const sum = n[w] + add;
      n[w] = sum >>> 0;
      if (sum <= 0xffffffff) return true;
      add = 1;
    }
    return false;
  }

  /** Compares the start of range i+1 (which exists) with the address after the block: > 0 after it, 0 equal, < 0 inside the block. */
  private compareNext(depth: number): number {
    // A block that ends the address space holds every range after i.
    if (!this.setNext(depth)) return -1;
    const s = this.ranges.starts;
    const b = 4 * (this.i + 1);
    const n = this.next;
    for (let w = 0; w < 4; w++) if (s[b + w] !== n[w]) return s[b + w] > n[w] ? 1 : -1;
    return 0;
  }

  /** Moves `i` to the range holding the address after the block (the block was answered another way). */
  private skipPast(depth: number): void {
    while (this.i + 1 < this.count && this.compareNext(depth) <= 0) this.i++;
  }
}

/** Lays the nodes out with the smallest record size that holds every reference. */
function serialize(kids: Int32Array, nodeCount: number, dataSize: number): SearchTree {
  const largest = nodeCount + 16 + dataSize;
  const recordSize: 24 | 28 | 32 = largest < 2 ** 24 ? 24 : largest < 2 ** 28 ? 28 : 32;
  if (largest >= 2 ** 32) throw new RangeError('the database is too large for 32-bit records');
  const nodeBytes = recordSize / 4;
  const bytes = new Uint8Array(nodeCount * nodeBytes);
  const value = (ref: number) => (ref >= 0 ? ref : ref === NO_DATA ? nodeCount : nodeCount + 16 + (-ref - 2));
  for (let n = 0; n < nodeCount; n++) {
    const l = value(kids[2 * n]);
    const r = value(kids[2 * n + 1]);
    const o = n * nodeBytes;
    if (recordSize === 24) {
      bytes[o] = l >>> 16; bytes[o + 1] = l >>> 8; bytes[o + 2] = l;
      bytes[o + 3] = r >>> 16; bytes[o + 4] = r >>> 8; bytes[o + 5] = r;
    } else if (recordSize === 28) {
      bytes[o] = l >>> 16; bytes[o + 1] = l >>> 8; bytes[o + 2] = l;
      bytes[o + 3] = ((l >>> 20) & 0xf0) | ((r >>> 24) & 0x0f);
      bytes[o + 4] = r >>> 16; bytes[o + 5] = r >>> 8; bytes[o + 6] = r;
    } else {
      bytes[o] = l >>> 24; bytes[o + 1] = l >>> 16; bytes[o + 2] = l >>> 8; bytes[o + 3] = l;
      bytes[o + 4] = r >>> 24; bytes[o + 5] = r >>> 16; bytes[o + 6] = r >>> 8; bytes[o + 7] = r;
    }
  }
  return { bytes, nodeCount, recordSize };
}
