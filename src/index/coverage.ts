/**
 * Coverage: which kinds of evidence an index holds, and which of them are
 * stale, read from its META (sources, their kinds and dates). It lives with
 * the index because it is a fact about the file; scoring interprets it
 * (src/scoring/coverage.ts) so that a layer the index does not hold yields
 * no signal, no risk and no claim. Computed per index at load and again on
 * a coarse timer (IndexHolder), never per request.
 */
import { EVIDENCE_KINDS, type EvidenceKind } from './evidence-kinds.ts';
import type { IndexMeta } from './format.ts';

const DAY = 86_400_000;

/**
 * Age past which a kind's newest source is stale, by how fast the published
 * truth moves: Tor exits churn daily, threat lists weekly; routes and
 * provider ranges over weeks; allocations and locations over months.
 */
export const STALE_AFTER_MS: Readonly<Record<EvidenceKind, number>> = {
  geolocation: 90 * DAY,
  asn: 180 * DAY,
  allocation: 90 * DAY,
  routing: 14 * DAY,
  rpki: 7 * DAY,
  bogons: 30 * DAY,
  tor: 1 * DAY,
  vpn: 21 * DAY,
  proxy: 21 * DAY,
  relays: 21 * DAY,
  crawlers: 21 * DAY,
  datacenter: 21 * DAY,
  threat: 7 * DAY,
  network_type: 90 * DAY,
};

/** One kind's state in an index. */
export interface KindCoverage {
  state: 'ready' | 'stale' | 'unavailable';
  /** Sources of this kind in the build. */
  sources: number;
  /** ISO date of the kind's newest source (null: none, or only built-in data). */
  newest: string | null;
  /** Age of that source at the time coverage was computed (null with `newest`). */
  ageSeconds: number | null;
  staleAfterSeconds: number;
}

/** What the index holds, per kind, at one moment. */
export interface Coverage {
  /** Bit (1 << index in EVIDENCE_KINDS) per kind the index holds. */
  readonly held: number;
  /** Bit per held kind whose newest source is past its threshold. */
  readonly stale: number;
  /**
   * Whether the routing data covers both address families, so that a missing
   * route is evidence (`unrouted_address`): an index with IPv4 routes only
   * (RouteViews pfx2as) says nothing about IPv6 announcements.
   */
  readonly routesComplete: boolean;
  /**
   * Day (`YYYY-MM-DD`) of the oldest routing source: space allocated after it
   * may simply be newer than the snapshot, so its missing route is no
   * evidence there. Null without routing data or a date.
   */
  readonly routesAsOf: string | null;
  readonly kinds: Readonly<Record<EvidenceKind, KindCoverage>>;
}

/** Bit of a kind in Coverage.held / Coverage.stale. */
export const KIND_BIT: Readonly<Record<EvidenceKind, number>> = Object.fromEntries(EVIDENCE_KINDS.map((k, i) => [k, 1 << i])) as Record<EvidenceKind, number>;

const ALL_KINDS = (1 << EVIDENCE_KINDS.length) - 1;

/** Every kind held and fresh: hand-made records in tests and tools, where nothing is missing. */
export const FULL_COVERAGE: Coverage = Object.freeze({
  held: ALL_KINDS,
  stale: 0,
  routesComplete: true,
  routesAsOf: null,
  kinds: Object.freeze(
    Object.fromEntries(
      EVIDENCE_KINDS.map((k) => [k, Object.freeze({ state: 'ready', sources: 0, newest: null, ageSeconds: null, staleAfterSeconds: STALE_AFTER_MS[k] / 1000 })]),
    ),
  ) as Record<EvidenceKind, KindCoverage>,
});

/** Whether the index holds a kind. */
export const holds = (c: Coverage, kind: EvidenceKind): boolean => (c.held & KIND_BIT[kind]) !== 0;
/** Whether a held kind is stale. */
export const isStale = (c: Coverage, kind: EvidenceKind): boolean => (c.stale & KIND_BIT[kind]) !== 0;

/**
 * Coverage of an index at `nowMs`. Each source names its kinds and date
 * (META); a kind's date is its newest source's. A date the file or the
 * manifest states outranks a file's mtime (which says when the file was
 * copied, not when its data was published): mtimes date a kind only when
 * none of its sources states a date. A file from before sources carried
 * kinds falls back to the build's capabilities and build time.
 */
export function coverageOf(meta: IndexMeta, nowMs: number): Coverage {
  const count = new Map<EvidenceKind, number>();
  const newestStated = new Map<EvidenceKind, number>();
  const newestMtime = new Map<EvidenceKind, number>();
  // The oldest routing source, by the same rule: a stated date outranks an mtime.
  const oldestRoutes = { stated: Infinity, mtime: Infinity };
  const builtAt = Date.parse(meta.builtAt);
  const described = meta.sources.every((s) => Array.isArray(s.kinds));
  for (const s of described ? meta.sources : []) {
    const at = s.date ? Date.parse(s.date) : builtAt;
    const newest = s.dateFrom === 'mtime' ? newestMtime : newestStated;
    for (const k of s.kinds as EvidenceKind[]) {
      if (!Object.hasOwn(STALE_AFTER_MS, k)) continue;
      count.set(k, (count.get(k) ?? 0) + 1);
      if (!(at <= (newest.get(k) ?? -Infinity))) newest.set(k, at);
      const oldest = s.dateFrom === 'mtime' ? 'mtime' : 'stated';
      if (k === 'routing' && at < oldestRoutes[oldest]) oldestRoutes[oldest] = at;
    }
  }
  const newest = new Map([...newestMtime, ...newestStated]);
  let held = 0;
  let stale = 0;
  const kinds = {} as Record<EvidenceKind, KindCoverage>;
  for (const k of EVIDENCE_KINDS) {
    const capability = meta.capabilities[k] ?? (k === 'proxy' ? meta.capabilities.vpn : undefined);
    // Older files: the build's capability flags, dated by the build.
    const isHeld = capability === true;
    const at = described ? newest.get(k) : isHeld ? builtAt : undefined;
    const age = at === undefined || Number.isNaN(at) ? null : Math.max(0, Math.round((nowMs - at) / 1000));
    const isOld = isHeld && age !== null && age * 1000 > STALE_AFTER_MS[k];
    if (isHeld) held |= KIND_BIT[k];
    if (isOld) stale |= KIND_BIT[k];
    kinds[k] = {
      state: !isHeld ? 'unavailable' : isOld ? 'stale' : 'ready',
      sources: described ? (count.get(k) ?? 0) : isHeld ? 1 : 0,
      newest: at === undefined || Number.isNaN(at) ? null : new Date(at).toISOString(),
      ageSeconds: age,
      staleAfterSeconds: STALE_AFTER_MS[k] / 1000,
    };
  }
  const families = meta.routedFamilies ?? [4, 6];
  const routesComplete = (held & KIND_BIT.routing) !== 0 && families.includes(4) && families.includes(6);
  const routesAt = Number.isFinite(oldestRoutes.stated) ? oldestRoutes.stated : oldestRoutes.mtime;
  const routesAsOf = (held & KIND_BIT.routing) !== 0 && Number.isFinite(routesAt) ? new Date(routesAt).toISOString().slice(0, 10) : null;
  return Object.freeze({ held, stale, routesComplete, routesAsOf, kinds: Object.freeze(kinds) });
}

/** The same scoring-relevant facts (held and stale kinds): a memo made under one serves the other. */
export function sameCoverage(a: Coverage, b: Coverage): boolean {
  return a.held === b.held && a.stale === b.stale && a.routesComplete === b.routesComplete && a.routesAsOf === b.routesAsOf;
}
