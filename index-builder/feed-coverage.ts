/**
 * What one feed copy holds, in a few numbers: rows, malformed lines and the
 * address space it lists per family, read with the builder's own parser for
 * its type. The feed updater (src/feeds/validate.ts) asks for these numbers
 * and gets them back as data, so a copy's check enters the builder once and
 * leaves once; the values themselves are never kept.
 */
import type { Addr, Family } from '../src/net/ip.ts';
import { FeedLimitError, SourceContext, type ReadLimits } from './feed/source.ts';
import { PARSERS } from './parsers/index.ts';
import type { BuildSink, ManifestSource } from './sink.ts';

/** The address space one family of a copy lists. */
export interface FamilyCoverage {
  /** Ranges reported. */
  ranges: number;
  /** IPv4: addresses; IPv6: /64 networks (a longer prefix counts as one). Summed over ranges: an upper bound when entries overlap. */
  units: number;
  /** Prefix length equivalent of the widest single range (32 or 128 when none is wider than one address); null when the family has no range. */
  widest: number | null;
}

/** What a feed copy holds, as its parser read it. */
export interface FeedCoverage {
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

/**
 * Parses the copy at `path` as `entry.type` within `limits` (null: unbounded,
 * a trusted copy) and counts what it holds; throws FeedError (naming
 * `displayPath` and the line) when it does not parse, FeedLimitError when it
 * passes a bound.
 */
export async function measureFeedCopy(path: string, displayPath: string, entry: ManifestSource, limits: ReadLimits | null): Promise<FeedCoverage> {
  const ctx = new SourceContext(path, displayPath, entry);
  ctx.readLimits = limits;
  const coverage = new CoverageSink(limits?.maxRanges ?? Infinity, (ranges) => {
    throw new FeedLimitError(displayPath, undefined, `more than ${ranges} ranges (the bound for ${entry.type})`);
  });
  const mod = await PARSERS[entry.type]();
  await mod.parse(ctx, coverage.asBuildSink());
  return { rows: ctx.rows, skipped: ctx.skipped, v4: coverage.v4, v6: coverage.v6 };
}
