/**
 * What changed between two indexes (`bun run diff`, the refresher's swap
 * summaries), declared once: `bun run diff --format json` prints an
 * IndexDiff, and the summaries /v1/data/status shows the admin carry its
 * headline counts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Closed, Named, Nullable, StringEnum } from './schema-kit.ts';

/** The field groups compared, in report order. */
export const DIFF_FIELDS = [
  'country',
  'city',
  'asn',
  'org',
  'allocation',
  'routing_origin',
  'is_datacenter',
  'is_vpn',
  'is_proxy',
  'is_tor',
  'is_privacy_relay',
  'is_mobile',
  'is_known_crawler',
  'is_bogon',
  'threat',
  'score_band',
  'verdict',
] as const;
export type DiffField = (typeof DIFF_FIELDS)[number];

/** The groups that are classification flags (newly flagged / unflagged are counted for them). */
export const DIFF_FLAG_FIELDS: readonly DiffField[] = DIFF_FIELDS.filter((f) => f.startsWith('is_'));

const Count = Type.Number({ minimum: 0, description: 'exact below 2^53' });
/** Changed address space: IPv4 addresses and IPv6 /64s (a /64 counts once when any address in it changed). */
export const ChangedSpace = Closed({ ipv4_addresses: Count, ipv6_64s: Count });
export type ChangedSpaceBody = Static<typeof ChangedSpace>;

/** An address family, 4 or 6 (an enum: OpenAPI 3.0 has no const). */
const FamilyNumber = Type.Unsafe<4 | 6>({ type: 'integer', enum: [4, 6] });

const FactValue = Nullable(Type.Union([Type.String(), Type.Number(), Type.Boolean()]));

/** One contiguous changed range with the same value before and after. */
export const ChangedRange = Closed({
  family: FamilyNumber,
  /** First and last address. */
  range: Type.String(),
  /** The range as one prefix, when it is one. */
  cidr: Nullable(Type.String()),
  /** IPv4: addresses; IPv6: /64s. */
  size: Count,
  before: FactValue,
  after: FactValue,
});
export type ChangedRangeBody = Static<typeof ChangedRange>;

export const FieldDiff = Closed({
  field: StringEnum(DIFF_FIELDS),
  changed: ChangedSpace,
  /** Flags only: false before, true after. */
  flagged: Type.Optional(ChangedSpace),
  /** Flags only: true before, false after. */
  unflagged: Type.Optional(ChangedSpace),
  /** The largest changed ranges, per family, largest first. */
  largest: Type.Array(ChangedRange),
});
export type FieldDiffBody = Static<typeof FieldDiff>;

const IndexSide = Closed({ path: Type.String(), built_at: Type.String({ format: 'date-time' }) });

export const IndexDiff = Named(
  'IndexDiff',
  Closed({
    old: IndexSide,
    new: IndexSide,
    fields: Type.Array(FieldDiff),
    /** Seconds the comparison took. */
    seconds: Type.Number({ minimum: 0 }),
  }),
);
export type IndexDiffBody = Static<typeof IndexDiff>;

/** A range whose value went back and forth across recent swaps. */
export const FlappingRange = Closed({
  field: StringEnum(DIFF_FIELDS),
  family: FamilyNumber,
  range: Type.String(),
  cidr: Nullable(Type.String()),
  /** The values it took, swap after swap (at least A, B, A). */
  values: Type.Array(FactValue),
  /** How many of the kept swaps changed it. */
  changes: Type.Integer({ minimum: 2 }),
});
export type FlappingRangeBody = Static<typeof FlappingRange>;

/** An object with an optional ChangedSpace per field group named. */
function perField(fields: readonly DiffField[]) {
  const optional = Type.Optional(ChangedSpace);
  return Closed(Object.fromEntries(fields.map((f) => [f, optional])) as Record<DiffField, typeof optional>);
}

/** One swap of the refresher: headline counts, its largest changes, and what keeps flapping. */
export const SwapSummary = Named(
  'SwapSummary',
  Closed({
    swapped_at: Type.String({ format: 'date-time' }),
    old_built_at: Type.String({ format: 'date-time' }),
    new_built_at: Type.String({ format: 'date-time' }),
    /** Per field group: the changed space. */
    changed: perField(DIFF_FIELDS),
    /** Per flag: newly flagged and unflagged space. */
    flagged: perField(DIFF_FLAG_FIELDS),
    unflagged: perField(DIFF_FLAG_FIELDS),
    /** Ranges changed by this swap (country and flags; the largest kept), the input of flapping. */
    ranges: Type.Array(Closed({ field: StringEnum(DIFF_FIELDS), ...Type.Omit(ChangedRange, ['size']).properties })),
    flapping: Type.Array(FlappingRange),
    seconds: Type.Number({ minimum: 0 }),
  }),
);
export type SwapSummaryBody = Static<typeof SwapSummary>;
