/**
 * Routed prefixes as deduplicated typed rows: routes grow with the routing
 * snapshots, and an object, an origin array and an intern key string per
 * route would grow the heap with them.
 * A row is [family, start words (four; IPv4 uses the first), prefix length,
 * AS-set, origin list id]; origin lists are interned once each.
 */
import type { Addr, Family } from '../../src/net/ip.ts';
import { addrAt } from './addr-words.ts';
import { GrowableU32 } from './growable.ts';
import { RowSet } from './row-set.ts';

const WIDTH = 8;
const Col = { FAMILY: 0, START: 1, PREFIX_LEN: 5, AS_SET: 6, ORIGINS: 7 } as const;

const scratch = new DataView(new ArrayBuffer(16));

/** Interned routes; id 0 is "none" (a row no route can equal: family 0). */
export class RouteTable {
  private readonly set = new RowSet(WIDTH);
  private readonly row = new Array<number>(WIDTH).fill(0);
  /** Origin list id -> [offset, offset + count) in `originWords`. */
  private readonly originOffsets = new GrowableU32(1024);
  private readonly originWords = new GrowableU32(1024);
  private originIds: Map<number | string, number> | undefined = new Map();

  constructor() {
    this.set.idOf(this.row);
    this.originOffsets.push(0);
  }

  /** Number of ids including the reserved 0. */
  get size(): number {
    return this.set.size;
  }

  /** The id of a route, adding it when new (equal family, start, length, origins in order and AS-set: one id). */
  intern(family: Family, start: Addr, prefixLen: number, origins: readonly number[], asSet: boolean): number {
    const row = this.row;
    row[Col.FAMILY] = family;
    if (family === 4) {
      row[Col.START] = start as number;
      row[Col.START + 1] = row[Col.START + 2] = row[Col.START + 3] = 0;
    } else {
      scratch.setBigUint64(0, (start as bigint) >> 64n);
      scratch.setBigUint64(8, start as bigint);
      for (let k = 0; k < 4; k++) row[Col.START + k] = scratch.getUint32(4 * k);
    }
    row[Col.PREFIX_LEN] = prefixLen;
    row[Col.AS_SET] = asSet ? 1 : 0;
    row[Col.ORIGINS] = this.originListId(origins);
    return this.set.idOf(row);
  }

  private originListId(origins: readonly number[]): number {
    const ids = this.originIds;
    if (!ids) throw new Error('RouteTable: intern after seal');
    const key = origins.length === 1 ? origins[0] : origins.join(',');
    let id = ids.get(key);
    if (id === undefined) {
      id = this.originOffsets.length - 1;
      for (const o of origins) this.originWords.push(o);
      this.originOffsets.push(this.originWords.length);
      ids.set(key, id);
    }
    return id;
  }

  /** Ends interning: the origin lists' keys are let go. */
  seal(): void {
    this.originIds = undefined;
  }

  private at(id: number, col: number): number {
    return this.set.rows.at(id * WIDTH + col);
  }

  family(id: number): Family {
    return this.at(id, Col.FAMILY) as Family;
  }

  /** The route's first address (a number for IPv4, a BigInt for IPv6). */
  start(id: number): Addr {
    const rows = this.set.rows.raw();
    return this.family(id) === 4 ? rows[id * WIDTH + Col.START] : addrAt(rows.subarray(id * WIDTH + Col.START, id * WIDTH + Col.START + 4), 0, 4);
  }

  prefixLen(id: number): number {
    return this.at(id, Col.PREFIX_LEN);
  }

  asSet(id: number): boolean {
    return this.at(id, Col.AS_SET) === 1;
  }

  /** The announcing origin: the first of a route that is not an AS-set (undefined otherwise, and for id 0). */
  firstOrigin(id: number): number | undefined {
    if (id === 0 || this.asSet(id)) return undefined;
    const list = this.at(id, Col.ORIGINS);
    const from = this.originOffsets.at(list);
    return from < this.originOffsets.at(list + 1) ? this.originWords.at(from) : undefined;
  }

  /** The route's origin ASNs in reported order (a new array). */
  origins(id: number): number[] {
    const list = this.at(id, Col.ORIGINS);
    const out: number[] = [];
    for (let i = this.originOffsets.at(list), end = this.originOffsets.at(list + 1); i < end; i++) out.push(this.originWords.at(i));
    return out;
  }
}
