/**
 * A minimal MaxMind DB writer for test fixtures (24-bit records), written
 * from the MaxMind DB File Format Specification 2.0. It exists so tests can
 * cover schemas and layouts the real dbip files lack (GeoLite2 schema, IPv4
 * inside an IPv6 tree with alias subtrees).
 */
import { parseCidr, type Addr } from '../../src/net/ip.ts';

/** A value the writer can encode. */
export type FixtureValue = string | number | boolean | FixtureValue[] | { [k: string]: FixtureValue } | Float;

/** Marks a number to be written as a 4-byte float instead of a double. */
export class Float {
  constructor(readonly value: number) {}
}

function ctrl(type: number, size: number): number[] {
  if (size >= 29) throw new Error('fixture writer handles sizes < 29 only');
  return type <= 7 ? [(type << 5) | size] : [size, type - 7];
}

/** Encodes a value into data-section bytes. */
export function encodeValue(v: FixtureValue): number[] {
  if (v instanceof Float) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v.value);
    return [...ctrl(15, 4), ...b];
  }
  if (typeof v === 'string') {
    const bytes = [...Buffer.from(v, 'utf8')];
    return [...ctrl(2, bytes.length), ...bytes];
  }
  if (typeof v === 'boolean') return ctrl(14, v ? 1 : 0);
  if (typeof v === 'number') {
    if (Number.isInteger(v) && v >= 0 && v <= 0xffffffff) {
      const bytes: number[] = [];
      for (let x = v; x > 0; x = Math.floor(x / 256)) bytes.unshift(x % 256);
      return [...ctrl(6, bytes.length), ...bytes];
    }
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, v);
    return [...ctrl(3, 8), ...b];
  }
  if (Array.isArray(v)) return [...ctrl(11, v.length), ...v.flatMap(encodeValue)];
  const entries = Object.entries(v);
  return [...ctrl(7, entries.length), ...entries.flatMap(([k, x]) => [...encodeValue(k), ...encodeValue(x)])];
}

interface TrieNode {
  kids: [Child, Child];
}
type Child = TrieNode | { data: number } | { aliasOf: string } | null;

function prefixBits(cidr: string): string {
  const c = parseCidr(cidr);
  if (!c) throw new Error(`bad fixture prefix ${cidr}`);
  const width = c.family === 4 ? 32 : 128;
  const start = c.family === 4 ? BigInt(c.start as number) : (c.start as bigint);
  return start.toString(2).padStart(width, '0').slice(0, c.len);
}

/** Options of a fixture database. */
export interface FixtureSpec {
  ipVersion: 4 | 6;
  /** Networks (CIDR text) and their records; IPv4 prefixes go under ::/96 in an IPv6 tree. */
  networks: Array<[cidr: string, value: FixtureValue]>;
  /** IPv6 prefixes whose subtree is the IPv4 subtree (e.g. ::ffff:0:0/96, 2002::/16). */
  aliases?: string[];
  databaseType?: string;
}

/** Builds the bytes of an MMDB file. */
export function writeMmdb(spec: FixtureSpec): Uint8Array {
  const data: number[] = [];
  const root: TrieNode = { kids: [null, null] };
  const nodeAt = (bits: string): TrieNode => {
    let n = root;
    for (const b of bits) {
      const i = Number(b) as 0 | 1;
      let k = n.kids[i];
      if (k === null) k = n.kids[i] = { kids: [null, null] };
      if (!('kids' in k)) throw new Error('fixture prefix nested under a data leaf');
      n = k;
    }
    return n;
  };
  for (const [cidr, value] of spec.networks) {
    let bits = prefixBits(cidr);
    if (spec.ipVersion === 6 && !cidr.includes(':')) bits = '0'.repeat(96) + bits;
    const parent = nodeAt(bits.slice(0, -1));
    parent.kids[Number(bits.at(-1)) as 0 | 1] = { data: data.length };
    data.push(...encodeValue(value));
  }
  for (const alias of spec.aliases ?? []) {
    const bits = prefixBits(alias);
    nodeAt(bits.slice(0, -1)).kids[Number(bits.at(-1)) as 0 | 1] = { aliasOf: '0'.repeat(96) };
  }
  // Number nodes breadth-first; the root is node 0.
  const order: TrieNode[] = [root];
  for (let i = 0; i < order.length; i++) for (const k of order[i].kids) if (k && 'kids' in k) order.push(k);
  const index = new Map(order.map((n, i) => [n, i]));
  const nodeCount = order.length;
  const recordOf = (k: Child): number => {
    if (k === null) return nodeCount;
    if ('data' in k) return nodeCount + 16 + k.data;
    if ('aliasOf' in k) return index.get(nodeAt(k.aliasOf))!;
    return index.get(k)!;
  };
  const tree: number[] = [];
  for (const n of order) {
    for (const k of n.kids) {
      const r = recordOf(k);
      tree.push((r >>> 16) & 255, (r >>> 8) & 255, r & 255);
    }
  }
  const metadata = encodeValue({
    node_count: nodeCount,
    record_size: 24,
    ip_version: spec.ipVersion,
    database_type: spec.databaseType ?? 'Fixture-City',
    languages: ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: 1700000000,
    description: { en: 'test fixture' },
  });
  const marker = [0xab, 0xcd, 0xef, ...Buffer.from('MaxMind.com')];
  return new Uint8Array([...tree, ...new Array(16).fill(0), ...data, ...marker, ...metadata]);
}

/** Start address of a CIDR, for assertions. */
export function cidrStart(cidr: string): Addr {
  return parseCidr(cidr)!.start;
}
