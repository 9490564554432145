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
  private readonly byPrefix = new Map<string, VrpValue[]>();
  /** Prefix lengths that occur, per family, so a lookup only tries those. */
  private readonly lengths: Record<Family, number[]> = { 4: [], 6: [] };

  constructor(vrps: readonly VrpValue[]) {
    const lens: Record<Family, Set<number>> = { 4: new Set(), 6: new Set() };
    for (const v of vrps) {
      const key = `${v.family}|${v.prefixLen}|${v.start}`;
      let list = this.byPrefix.get(key);
      if (!list) this.byPrefix.set(key, (list = []));
      list.push(v);
      lens[v.family].add(v.prefixLen);
    }
    this.lengths[4] = [...lens[4]].sort((a, b) => a - b);
    this.lengths[6] = [...lens[6]].sort((a, b) => a - b);
  }

  get empty(): boolean {
    return this.byPrefix.size === 0;
  }

  /** VRPs whose prefix covers the route prefix (same or shorter length, containing it). */
  covering(family: Family, start: Addr, prefixLen: number): VrpValue[] {
    const out: VrpValue[] = [];
    for (const len of this.lengths[family]) {
      if (len > prefixLen) break;
      const base = prefixRange(family, start, len).start;
      const list = this.byPrefix.get(`${family}|${len}|${base}`);
      if (list) out.push(...list);
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
