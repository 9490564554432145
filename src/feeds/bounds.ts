/**
 * The bounds a feed copy is checked against before it is believed: how
 * large it may be (downloaded and inflated), how many ranges it may list,
 * how wide a single range and how much address space a list that is not the
 * range holder's own may claim, and how far it may move from the previous
 * accepted copy. docs/feeds-update.md states each number and why.
 */
import type { ReadLimits } from '../../index-builder/index.ts';
import type { CatalogFeed } from './catalog.ts';
import type { CopySummary, FamilyCoverage } from './copy-summary.ts';

/** Whose ranges a list states: its own holder's (a cloud, a crawler operator), a registry's or routing table's, or a third party's opinion about others' ranges. */
export type ListSource = 'own' | 'registry' | 'third-party';

interface TypeBounds {
  /** Most bytes of a copy, as downloaded and as parsed (after gunzip). */
  maxMb: number;
  /** Most ranges a copy may list. */
  maxRanges: number;
  source: ListSource;
}

const MB = 1048576;

/** Per manifest type; the publisher's current size is a small fraction of each (see docs/feeds-update.md). */
const TYPE_BOUNDS: Record<string, TypeBounds> = {
  'geo-mmdb': { maxMb: 512, maxRanges: 20_000_000, source: 'registry' },
  'geo-csv': { maxMb: 1024, maxRanges: 20_000_000, source: 'registry' },
  geofeed: { maxMb: 64, maxRanges: 2_000_000, source: 'own' },
  'asn-csv': { maxMb: 256, maxRanges: 5_000_000, source: 'registry' },
  'asn-info': { maxMb: 64, maxRanges: 0, source: 'registry' },
  'rir-delegated': { maxMb: 64, maxRanges: 2_000_000, source: 'registry' },
  pfx2as: { maxMb: 256, maxRanges: 5_000_000, source: 'registry' },
  'ris-whois': { maxMb: 512, maxRanges: 5_000_000, source: 'registry' },
  'rpki-vrps': { maxMb: 256, maxRanges: 5_000_000, source: 'registry' },
  'crawler-ranges': { maxMb: 8, maxRanges: 100_000, source: 'own' },
  'cloud-aws': { maxMb: 64, maxRanges: 1_000_000, source: 'own' },
  'cloud-gcp': { maxMb: 16, maxRanges: 200_000, source: 'own' },
  'cloud-azure': { maxMb: 64, maxRanges: 1_000_000, source: 'own' },
  'cloud-oracle': { maxMb: 16, maxRanges: 200_000, source: 'own' },
  'provider-ranges': { maxMb: 32, maxRanges: 500_000, source: 'own' },
  'icloud-relay': { maxMb: 64, maxRanges: 2_000_000, source: 'own' },
  'cidr-list': { maxMb: 64, maxRanges: 2_000_000, source: 'own' },
  'asn-list': { maxMb: 8, maxRanges: 0, source: 'third-party' },
  'tor-exits': { maxMb: 16, maxRanges: 200_000, source: 'third-party' },
  'spamhaus-drop': { maxMb: 16, maxRanges: 200_000, source: 'third-party' },
  'spamhaus-asndrop': { maxMb: 8, maxRanges: 0, source: 'third-party' },
  'threat-feed': { maxMb: 16, maxRanges: 500_000, source: 'third-party' },
  bogons: { maxMb: 32, maxRanges: 1_000_000, source: 'registry' },
  'peeringdb-net': { maxMb: 128, maxRanges: 0, source: 'registry' },
};

/** A type the table does not name (none today): a modest size and count. */
const DEFAULT_BOUNDS: TypeBounds = { maxMb: 64, maxRanges: 2_000_000, source: 'third-party' };

/** Categories whose range lists are a third party's opinion (a cidr-list of these is not the holder's own). */
const THIRD_PARTY_CATEGORIES = new Set(['vpn', 'proxy', 'threat', 'datacenter']);

/** A gzip copy may inflate to at most this many times its size (well above a text feed's ratio, far below a bomb's). */
const MAX_INFLATE_RATIO = 50;
/** Longest line of a line-based feed (far above any real feed's). */
const MAX_LINE_BYTES = 64 * 1024;

/** Announced IPv4 space, addresses (union of the routed prefixes, RouteViews 2024: 3.03e9). */
const ANNOUNCED_V4 = 3.0e9;
/** Announced IPv6 space, /64 networks (union of the routed prefixes, RIS 2022: 9.2e14, rounded up to 2^50). */
const ANNOUNCED_V6_NETS64 = 2 ** 50;
/** Share of the announced space a third-party list may cover, by category (tor exits and threat lists count as `threat`). */
const MAX_SHARE: Record<string, number> = { vpn: 0.02, proxy: 0.02, threat: 0.02, datacenter: 0.25 };

/** Widest single range a third-party list may hold: a /8 of IPv4, a /16 of IPv6. */
const WIDEST_THIRD_PARTY = { v4: 8, v6: 16 } as const;
/** A copy may cover at most this factor more, or less, than the previous copy (per family)... */
const MAX_COVERAGE_FACTOR = 4;
/** ...once either copy covers more than this: a /16 of IPv4, a /48 of IPv6 (65 536 /64s); smaller lists move freely. */
const COVERAGE_FLOOR = { v4: 65_536, v6: 65_536 } as const;

function boundsOf(feed: CatalogFeed): TypeBounds {
  return TYPE_BOUNDS[feed.type] ?? DEFAULT_BOUNDS;
}

/** Whose list this feed is. */
function listSourceOf(feed: CatalogFeed): ListSource {
  if (feed.type === 'cidr-list' && THIRD_PARTY_CATEGORIES.has(feed.options.category ?? '')) return 'third-party';
  return boundsOf(feed).source;
}

/** The category a third-party list's share is bounded by. */
function shareCategoryOf(feed: CatalogFeed): string {
  if (feed.type === 'cidr-list') return feed.options.category ?? 'threat';
  return 'threat';
}

/** Most bytes of this feed's copy (its catalog `maxMb`, else its type's), never above the caller's own ceiling. */
export function maxBytesOf(feed: CatalogFeed, ceiling = Infinity): number {
  return Math.min(ceiling, (feed.maxMb ?? boundsOf(feed).maxMb) * MB);
}

/** The read bounds of a new copy's validation. */
export function readLimitsOf(feed: CatalogFeed): ReadLimits {
  return { maxBytes: maxBytesOf(feed), maxRatio: MAX_INFLATE_RATIO, maxLineBytes: MAX_LINE_BYTES, maxRanges: maxRangesOf(feed) };
}

/** Most ranges a copy of this feed may list (a type without ranges: none, its rows are ASNs). */
function maxRangesOf(feed: CatalogFeed): number {
  return boundsOf(feed).maxRanges;
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

/**
 * Why `next` may not replace the copy on disk, or null. `previous` is the
 * accepted copy's summary (null: none); `accept` (the operator's --accept)
 * waives the comparison with it, never the bounds that hold for any copy.
 */
export function copyRefusal(feed: CatalogFeed, next: CopySummary, previous: CopySummary | null, accept = false): string | null {
  if (next.rows < feed.minRows) return `${next.rows} rows, fewer than the minimum ${feed.minRows}`;
  // More malformed lines than data: an error page or a different format that happens to half-parse.
  if (next.skipped > next.rows) return `${next.skipped} malformed lines against ${next.rows} rows`;
  const families = [
    ['v4', 'IPv4', ANNOUNCED_V4, 'addresses'],
    ['v6', 'IPv6', ANNOUNCED_V6_NETS64, '/64 networks'],
  ] as const;
  for (const [key, name] of families) {
    if (next[key].widest === 0) return `lists the whole ${name} space (/0)`;
  }
  if (listSourceOf(feed) === 'third-party') {
    const category = shareCategoryOf(feed);
    const share = MAX_SHARE[category] ?? MAX_SHARE.threat;
    for (const [key, name, announced, unit] of families) {
      const c: FamilyCoverage = next[key];
      if (c.widest !== null && c.widest < WIDEST_THIRD_PARTY[key]) {
        return `a range as wide as a /${c.widest} in a ${category} list that is not the holder's own (widest allowed: /${WIDEST_THIRD_PARTY[key]} of ${name})`;
      }
      if (c.units > share * announced) {
        return `covers ${pct(c.units / announced)} of the announced ${name} space (${c.units} ${unit}); a ${category} list may cover at most ${pct(share)}`;
      }
    }
  }
  // A previous copy that would not pass these bounds itself (accepted before they existed: a poisoned list) is no baseline.
  if (accept || !previous || copyRefusal(feed, previous, null) !== null) return null;
  if (previous.rows > 0) {
    const lost = (previous.rows - next.rows) / previous.rows;
    if (lost > feed.maxShrink) {
      return `shrank from ${previous.rows} to ${next.rows} rows (${Math.round(lost * 100)}% lost, at most ${Math.round(feed.maxShrink * 100)}% allowed)`;
    }
  }
  for (const [key, name, , unit] of families) {
    const was = previous[key].units;
    const now = next[key].units;
    if (now > MAX_COVERAGE_FACTOR * Math.max(was, COVERAGE_FLOOR[key]) || (was > COVERAGE_FLOOR[key] && now * MAX_COVERAGE_FACTOR < was)) {
      return `${name} coverage moved from ${was} to ${now} ${unit} (more than ${MAX_COVERAGE_FACTOR}x; --accept takes it)`;
    }
  }
  return null;
}
