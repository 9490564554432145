/**
 * What a validated feed copy holds, in a few numbers: its sha256, rows,
 * malformed lines and the address space it lists per family. Kept in the
 * feed state so the next copy is compared with these numbers, never with a
 * re-parse of the previous file.
 */
import type { Addr, Family } from '../net/ip.ts';
import type { BuildSink } from '../../index-builder/sink.ts';

/** The address space one family of a copy lists. */
export interface FamilyCoverage {
  /** Ranges reported. */
  ranges: number;
  /** IPv4: addresses; IPv6: /64 networks (a longer prefix counts as one). Summed over ranges: an upper bound when entries overlap. */
  units: number;
  /** Prefix length equivalent of the widest single range (32 or 128 when none is wider than one address); null when the family has no range. */
  widest: number | null;
}

export interface CopySummary {
  sha256: string;
  rows: number;
  skipped: number;
  v4: FamilyCoverage;
  v6: FamilyCoverage;
}

/** An empty family. */
export const noCoverage = (): FamilyCoverage => ({ ranges: 0, units: 0, widest: null });

/** Prefix length whose block holds `size` addresses, rounded to the wider side (a 3-address range is a /30 equivalent). */
function prefixEquivalent(bits: number, size: bigint): number {
  if (size <= 1n) return bits;
  return bits - (size - 1n).toString(2).length;
}

/**
 * A build sink that keeps no values, only each family's coverage: every
 * range-bearing call adds its size. Memory stays constant however long the feed.
 */
export class CoverageSink {
  readonly v4 = noCoverage();
  readonly v6 = noCoverage();

  /** `onTooMany` runs (and should throw) when the ranges pass `maxRanges`: a parse stops there. */
  constructor(
    private readonly maxRanges = Infinity,
    private readonly onTooMany: (maxRanges: number) => never = () => {
      throw new Error('too many ranges');
    },
  ) {}

  /** Adds one inclusive range. */
  add(family: Family, start: Addr, end: Addr): void {
    if (this.v4.ranges + this.v6.ranges >= this.maxRanges) this.onTooMany(this.maxRanges);
    if (family === 4) {
      const size = (end as number) - (start as number) + 1;
      const c = this.v4;
      c.ranges++;
      c.units += size;
      const len = prefixEquivalent(32, BigInt(size));
      if (c.widest === null || len < c.widest) c.widest = len;
      return;
    }
    const size = (end as bigint) - (start as bigint) + 1n;
    const c = this.v6;
    c.ranges++;
    const nets = size >> 64n;
    c.units += nets === 0n ? 1 : Number(nets);
    const len = prefixEquivalent(128, size);
    if (c.widest === null || len < c.widest) c.widest = len;
  }

  /** The BuildSink view: ranges counted, everything else ignored. */
  asBuildSink(): BuildSink {
    const range = (family: Family, start: Addr, end: Addr) => this.add(family, start, end);
    const ignore = () => {};
    return {
      geo: range,
      asn: range,
      asnName: ignore,
      allocation: range,
      route: range,
      vrp: (v) => this.add(v.family, v.start, v.end),
      provider: range,
      asnCategory: ignore,
      asnNetworkType: ignore,
      crawler: range,
      torExit: range,
      threatList: range,
      asnDrop: ignore,
      threatFeed: range,
      bogon: range,
    };
  }
}
