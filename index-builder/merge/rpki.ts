/**
 * Route origin validation (RFC 6811) of each announced prefix against the
 * loaded VRPs, once at build time.
 */
import type { Addr, Family } from '../../src/net/ip.ts';
import { prefixRange } from '../../src/net/ip.ts';
import type { RpkiStatus } from '../../src/index/record.ts';
import type { VrpValue } from '../sink.ts';

/** VRPs indexed by (family, prefix length, prefix start) for covering-prefix lookups. */
export class VrpIndex {
  /**
   * Per family, per prefix length: prefix start -> VRPs. Keyed by the start
   * itself (numbers and BigInts compare by value in a Map), so the million
   * covering lookups of a full build make no key strings.
   */
  private readonly byLength: Record<Family, Map<number, Map<Addr, VrpValue[]>>> = { 4: new Map(), 6: new Map() };
  /** Prefix lengths that occur, per family, so a lookup only tries those. */
  private readonly lengths: Record<Family, number[]> = { 4: [], 6: [] };

  constructor(vrps: readonly VrpValue[]) {
    for (const v of vrps) {
      const byLen = this.byLength[v.family];
      let starts = byLen.get(v.prefixLen);
      if (!starts) byLen.set(v.prefixLen, (starts = new Map()));
      const start = prefixRange(v.family, v.start, v.prefixLen).start;
      let list = starts.get(start);
      if (!list) starts.set(start, (list = []));
      list.push(v);
    }
    this.lengths[4] = [...this.byLength[4].keys()].sort((a, b) => a - b);
    this.lengths[6] = [...this.byLength[6].keys()].sort((a, b) => a - b);
  }

  get empty(): boolean {
    return this.lengths[4].length === 0 && this.lengths[6].length === 0;
  }

  /** VRPs whose prefix covers the route prefix (same or shorter length, containing it). */
  covering(family: Family, start: Addr, prefixLen: number): VrpValue[] {
    const out: VrpValue[] = [];
    const byLen = this.byLength[family];
    for (const len of this.lengths[family]) {
      if (len > prefixLen) break;
      const list = byLen.get(len)!.get(prefixRange(family, start, len).start);
      if (list) for (const v of list) out.push(v);
    }
    return out;
  }
}

/**
 * RFC 6811 state of one origin: NotFound without covering VRPs; Valid when a
 * covering VRP has this origin and a maxLength >= the route length; else Invalid.
 * An AS-set origin (null) can never match, so it is Invalid when covered.
 */
export function validateOrigin(covering: readonly VrpValue[], origin: number | null, prefixLen: number): RpkiStatus {
  if (covering.length === 0) return 'not_found';
  if (origin === null) return 'invalid';
  for (const v of covering) {
    // AS0 VRPs (RFC 6483) never match an origin: they only make covered routes invalid.
    if (v.asn !== 0 && v.asn === origin && prefixLen <= v.maxLength) return 'valid';
  }
  return 'invalid';
}

/**
 * State of a route with one or more origins (MOAS): valid when any origin is
 * valid (that origin is authorised), invalid when covered and none is, else
 * not_found. Without VRPs loaded: unknown.
 */
export function validateRoute(
  index: VrpIndex,
  family: Family,
  start: Addr,
  prefixLen: number,
  origins: readonly number[],
  asSet: boolean,
): RpkiStatus {
  if (index.empty) return 'unknown';
  const covering = index.covering(family, start, prefixLen);
  if (covering.length === 0) return 'not_found';
  if (asSet) return 'invalid';
  for (const o of origins) if (validateOrigin(covering, o, prefixLen) === 'valid') return 'valid';
  return 'invalid';
}
