/**
 * threat_density per ASN (spec 2.5): the IPv4 addresses each ASN announces,
 * how many of them are threat-listed, and how many separate listed networks,
 * summed interval by interval during the IPv4 sweep.
 */
import { Flag } from '../../src/index/record.ts';

const THREAT_FLAGS = Flag.DROP | Flag.THREAT_LIST | Flag.THREAT_FEED;

/** Per-ASN accumulators for threat_density over announced IPv4 space. */
export interface AsnDensity {
  total: number;
  threatAddresses: number;
  threatNetworks: number;
}

/** Accumulates density as the sweep visits IPv4 intervals in address order. */
export class DensityCounter {
  readonly byAsn = new Map<number, AsnDensity>();
  private lastThreatAsn = -1;
  private lastThreatEnd = -1;

  /** Counts the interval [start, end] announced by `asn` with record flags `flags`. */
  add(asn: number, start: number, end: number, flags: number): void {
    const size = end - start + 1;
    let d = this.byAsn.get(asn);
    if (!d) this.byAsn.set(asn, (d = { total: 0, threatAddresses: 0, threatNetworks: 0 }));
    d.total += size;
    if (flags & THREAT_FLAGS) {
      d.threatAddresses += size;
      // Adjacent threat intervals of the same ASN count as one network.
      if (!(this.lastThreatAsn === asn && this.lastThreatEnd === start - 1)) d.threatNetworks++;
      this.lastThreatAsn = asn;
      this.lastThreatEnd = end;
    }
  }
}
