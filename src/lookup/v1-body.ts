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
import type { LookupHit } from '../index/record.ts';
import type { Policy } from '../scoring/index.ts';
import { RecordMemo } from './record-memo.ts';
import { ScoredPartCache } from './scored-part.ts';
import { utcOffset } from './timezone.ts';
import { buildV1, locationOf, networkOf, routingOf, type V1Context } from './v1.ts';

/**
 * Slots of the per-record memo (~1 KB each: at most ~130 MB; the scored text
 * in an entry is shared). Uniformly random IPv4 lookups on the fixture index
 * hit ~82 % of the time with 2^16 slots, ~87 % with 2^17, ~91 % with 2^18; on
 * a loaded server 2^16 and 2^18 cost the same CPU as 2^17 (BENCHMARKS.md,
 * fifth session).
 */
const TAIL_SLOTS = 1 << 17;

/** Everything after `"stack"` for one record of one index, with what it was made under. */
interface TailEntry {
  /** The record's zone, to check its current offset without reading the record. */
  zone: string | null;
  offset: string | null;
  owner: string | null;
  policy: Policy;
  text: string;
}

/** Serialized full v1 objects. */
export class V1BodyCache {
  private readonly scored = new ScoredPartCache();
  /** Tails of the records of `index` asked most often lately, by record id. */
  private readonly tails = new RecordMemo<TailEntry>(TAIL_SLOTS);
  /**
   * The index the tails belong to, weakly: a replaced index must become
   * unreachable so its mapping can be released (IndexHolder.reload), and a
   * memo no request touches after a reload must not keep it. The memo
   * starts over when the index changes.
   */
  private index: WeakRef<object> | null = null;

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
    return hit.index !== undefined && hit.index === this.index?.deref() && this.tails.get(hit.recordId) !== undefined;
  }

  /** JSON text equal to JSON.stringify(buildV1(hit, ctx, null)). */
  body(hit: LookupHit, ctx: V1Context): string {
    // A crawler proof changes classification for this address alone: never shared.
    if (ctx.scoring.verifiedCrawler !== null) return JSON.stringify(buildV1(hit, ctx, null));
    return `{"ip":${JSON.stringify(hit.ip)},"stack":"${hit.family === 4 ? 'ipv4' : 'ipv6'}",${this.tail(hit, ctx)}`;
  }

  /**
   * `"location":...` through the end of the object for a hit's record, reused
   * while the index, record id, zone offset, owner and policy are the same.
   * A reuse reads nothing of the record: on random traffic each field read
   * is a cache miss in the mapped index.
   */
  private tail(hit: LookupHit, ctx: V1Context): string {
    const owner = ctx.rdapOwner ?? null;
    const index = hit.index;
    if (index !== undefined && index !== this.index?.deref()) {
      // A reload: start over (requests still finishing on the old index pass through here too, briefly).
      this.tails.clear();
      this.index = new WeakRef(index);
    }
    let e: TailEntry | undefined;
    if (index !== undefined) {
      this.tails.touch(hit.recordId);
      e = this.tails.get(hit.recordId);
    }
    // Same index (checked above) and same record id: the same facts.
    if (
      e !== undefined &&
      e.owner === owner &&
      e.policy === ctx.policy &&
      (e.zone === null || utcOffset(e.zone, ctx.now) === e.offset)
    ) {
      return e.text;
    }
    const record = hit.record;
    const scored = this.scored.get(record, ctx);
    // As locationOf: an empty zone name has no offset.
    const zone = record.geo?.timezone || null;
    // One serialization of the record's own fields (not three joined): fewer calls,
    // and one flat string rather than a rope of many small ones for the response to walk.
    const own = JSON.stringify({ location: locationOf(record, ctx.now), network: networkOf(record, scored.classification, owner), routing: routingOf(record) });
    const text = `${own.slice(1, -1)},${scored.text}`;
    // Hand-made hits (tests, the scoring view) name no index: nothing to key them by.
    if (index !== undefined) this.tails.offer(hit.recordId, { zone, offset: zone ? utcOffset(zone, ctx.now) : null, owner, policy: ctx.policy, text });
    return text;
  }
}
