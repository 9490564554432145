/**
 * Facts every build gets without a feed: IANA special-purpose blocks and
 * IANA's top-level allocations to the RIRs (the least specific allocation
 * layer, so any RIR delegated file overrides it).
 */
import { parseCidr } from '../src/net/ip.ts';
import type { Collector } from './merge/collector.ts';
import { IANA_ADDRESS_SPACE } from './iana/address-space-data.ts';
import { SPECIAL_PURPOSE_BLOCKS } from './iana/special-purpose.ts';

/** Adds the built-in IANA tables to a collector. Returns the number of rows. */
export function addBuiltins(collector: Collector): number {
  let rows = 0;
  for (const [, prefix, registry, status, date] of IANA_ADDRESS_SPACE) {
    const c = parseCidr(prefix);
    if (!c) throw new Error(`built-in IANA table: bad prefix ${prefix}`);
    // IANA dates are YYYY-MM or YYYY-MM-DD; keep them as published.
    collector.allocation(c.family, c.start, c.end, { registry, status, date: date || undefined, blockStart: c.start, blockEnd: c.end });
    rows++;
  }
  for (const b of SPECIAL_PURPOSE_BLOCKS) {
    const c = parseCidr(b.cidr);
    if (!c) throw new Error(`built-in special-purpose table: bad prefix ${b.cidr}`);
    collector.specialUse(c.family, c.start, c.end, { name: b.name, cidr: b.cidr, rfc: b.rfc, kind: b.kind, global: b.global });
    // A non-global block is IANA's, not the RIR's whose larger block surrounds it (2001:db8::/32 in APNIC's 2001:c00::/23).
    if (!b.global) collector.allocation(c.family, c.start, c.end, { registry: 'iana', status: 'reserved', blockStart: c.start, blockEnd: c.end });
    rows++;
  }
  return rows;
}
