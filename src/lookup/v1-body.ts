/**
 * The full v1 body as JSON text, composed from parts: `ip` and `stack` per
 * address; `location`, `network` and `routing` (~1 KB) serialized per
 * record; and the scored part (score through explanation, ~2 KB and most of
 * the cost) shared by every record with the same scoring facts
 * (scored-part.ts). A record's tail (all but ip and stack) is kept in a
 * bounded memo of 2^17 slots that keeps the records asked most often
 * (record-memo.ts). A miss decodes the record and serializes its own part; on
 * a busy server with random traffic it costs ~2.75 µs more than a hit, and a
 * hit ~1.9 µs more than a fixed body, since the record's ~1 KB is cold
 * (BENCHMARKS.md, fifth session).
 */
import type { IndexRecord, LookupHit } from '../index/record.ts';
import type { Coverage, Policy } from '../scoring/index.ts';
import { RecordMemo } from './record-memo.ts';
import { ScoredPartCache, type ScoredText } from './scored-part.ts';
import { QUARTER_HOUR } from './timezone.ts';
import { buildV1, locationOf, needsScoring, networkOf, routingOf, type V1Context } from './v1.ts';
import { projectV1Text } from './v1-projected-text.ts';

/**
 * Slots of the per-record memo (~1 KB each: at most ~130 MB; the scored text
 * is shared). Uniformly random IPv4 lookups on the fixture index hit ~82 % of
 * the time with 2^16 slots, ~87 % with 2^17, ~91 % with 2^18; on a loaded
 * server 2^16 and 2^18 cost the same CPU as 2^17 (BENCHMARKS.md, fifth
 * session).
 */
export const TAIL_SLOTS = 1 << 17;

/**
 * What a memo slot holds: the body after `"stack"` is the concatenation of
 * these four, in this order. OWN is the record's `"location":…,"routing":…,`
 * as one flat string; the others come from ScoredPartCache and are shared
 * with other records, so they are usually in cache when a body is written.
 */
const OWN = 0;
const HEAD = 1;
const OPERATOR = 2;
const REST = 3;
const PARTS = 4;

/** Stamp of a body with no time zone: valid at any time (others hold for the quarter hour they were made in, timezone.ts). */
const TIMELESS = -1;

/** A rope resolved into one flat string (an indexed read resolves it; `charCodeAt` does not always). */
function flatten(s: string): string {
  void s[s.length - 1];
  return s;
}

/** Serialized full v1 objects. */
export class V1BodyCache {
  private readonly scored: ScoredPartCache;
  /**
   * Body parts of the records of `index` asked most often lately, by record
   * id, stamped with their quarter hour. Made on the first hit of an index
   * (~6 MB of tables): a cache that only ever sees hand-made hits never needs it.
   */
  private tails: RecordMemo<string> | null = null;
  /**
   * The index the tails belong to, weakly: a replaced index must become
   * unreachable so its mapping can be released (IndexHolder.reload), and a
   * memo no request touches after a reload must not keep it. The memo
   * starts over when the index or the policy changes.
   */
  private index: WeakRef<object> | null = null;
  private policy: Policy | null = null;
  private coverage: Coverage | undefined = undefined;
  private overrides: number | undefined = undefined;

  /** `tailSlots`: slots of the per-record memo (a power of two); `scoredViews`: views the scored memo holds. */
  constructor(
    private readonly tailSlots = TAIL_SLOTS,
    scoredViews?: number,
  ) {
    this.scored = new ScoredPartCache(scoredViews);
  }

  /** The index the memo holds tails of, while it is alive (null before the first). */
  get heldIndex(): object | null {
    return this.index?.deref() ?? null;
  }

  /** Distinct scoring views held (a few hundred on real indexes). */
  get views(): number {
    return this.scored.size;
  }

  /**
   * Whether the memo holds a body tail for this hit's record of this index
   * (it then answers without reading the record's row, which on random
   * traffic is a cache miss).
   */
  holds(hit: LookupHit): boolean {
    return hit.index !== undefined && hit.index === this.index?.deref() && this.tails !== null && this.tails.find(hit.recordId) >= 0;
  }

  /** JSON text equal to JSON.stringify(buildV1(hit, ctx, null)). */
  body(hit: LookupHit, ctx: V1Context): string {
    // A crawler proof changes classification for this address alone: never shared.
    if (ctx.scoring.verifiedCrawler !== null) return JSON.stringify(buildV1(hit, ctx, null));
    // Canonical address text (digits, hex, '.' and ':') needs no JSON escaping.
    const prefix = `{"ip":"${hit.ip}","stack":"${hit.family === 4 ? 'ipv4' : 'ipv6'}",`;
    const index = hit.index;
    // An RDAP owner is known for few addresses (it replaces network.owner): not memoised.
    // Hand-made hits (tests, the scoring view) name no index: nothing to key them by.
    if (index === undefined || ctx.rdapOwner != null) {
      const p = this.parts(hit.record, ctx, ctx.now);
      return `${prefix}${p.own}${p.scored.head}${p.scored.operator}${p.scored.rest}`;
    }
    let tails = this.tails;
    if (tails === null) tails = this.tails = new RecordMemo<string>(this.tailSlots, PARTS);
    if (index !== this.index?.deref() || ctx.policy !== this.policy || ctx.scoring.coverage !== this.coverage || ctx.overridesGeneration !== this.overrides) {
      // A reload, a source turned stale, or the overrides changed: start over (requests still finishing on the old index pass through here too, briefly).
      // Answers under an override are never kept here (their hits name no index, overrides/overlay.ts); the generation
      // check keeps the memo honest should that ever change.
      tails.clear();
      this.index = new WeakRef(index);
      this.policy = ctx.policy;
      this.coverage = ctx.scoring.coverage;
      this.overrides = ctx.overridesGeneration;
    }
    const id = hit.recordId;
    tails.touch(id);
    const now = ctx.now ?? Date.now();
    const quarter = Math.floor(now / QUARTER_HOUR);
    let at = tails.find(id);
    if (at >= 0) {
      const stamp = tails.stamp(at);
      // Same index, policy and record id: the same facts; same quarter hour: the same zone offset.
      if (stamp === TIMELESS || stamp === quarter) {
        return `${prefix}${tails.value(at, OWN)}${tails.value(at, HEAD)}${tails.value(at, OPERATOR)}${tails.value(at, REST)}`;
      }
    }
    const record = hit.record;
    const { own, scored } = this.parts(record, ctx, now);
    at = tails.admit(id, record.geo?.timezone ? quarter : TIMELESS);
    if (at >= 0) {
      tails.set(at, OWN, own);
      tails.set(at, HEAD, scored.head);
      tails.set(at, OPERATOR, scored.operator);
      tails.set(at, REST, scored.rest);
    }
    return `${prefix}${own}${scored.head}${scored.operator}${scored.rest}`;
  }

  /** A record's own part (`"location":…,"routing":…,`, flat) and its scored part. */
  private parts(record: IndexRecord, ctx: V1Context, now: number | undefined): { own: string; scored: ScoredText } {
    const scored = this.scored.get(record, ctx);
    // One serialization of the record's own fields (not three joined), flattened once
    // here so a memo hit reaches its characters through one string, not a rope of pieces.
    const own = JSON.stringify({ location: locationOf(record, now), network: networkOf(record, scored.classification, ctx.rdapOwner ?? null, ctx.scoring.coverage), routing: routingOf(record) });
    return { own: flatten(`${own.slice(1, -1)},`), scored };
  }
}

/**
 * The v1 body of an address for a context, as JSON text: the whole object
 * (from `bodies`, memoised) when `fields` is null and no RDAP object is
 * added, else the requested fields with `rdap` (the Pro include) when given.
 */
export function v1BodyText(bodies: V1BodyCache, hit: LookupHit, ctx: V1Context, fields: ReadonlySet<string> | null = null, rdap: object | null = null): string {
  if (fields === null && rdap === null) return bodies.body(hit, ctx);
  // Scored fields are cut from the memoised whole body (same context, so the same members).
  if (rdap === null && fields !== null && needsScoring(fields)) return projectV1Text(bodies.body(hit, ctx), fields);
  const body = buildV1(hit, ctx, fields);
  if (rdap !== null) body.rdap = rdap;
  return JSON.stringify(body);
}
