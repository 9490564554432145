/**
 * The full v1 body as JSON text, composed from parts: `ip` and `stack` per
 * address; `location`, `network` and `routing` (~1 KB) serialized per record
 * and kept in a small direct-mapped memo (one slot per record id modulo
 * 32768, so memory is bounded and a lookup is an array read); and the scored
 * part (score through explanation, ~2 KB and most of the cost) shared by
 * every record with the same scoring facts (scored-part.ts). A miss in the
 * memo costs three small JSON.stringify calls, so uniformly random traffic,
 * which rarely repeats a record, stays cheap.
 */
import type { LookupHit } from '../index/record.ts';
import type { Classification, Policy } from '../scoring/index.ts';
import { ScoredPartCache } from './scored-part.ts';
import { utcOffset } from './timezone.ts';
import { buildV1, locationOf, networkOf, routingOf, type V1Context } from './v1.ts';

/** Slots of the per-record memo of the middle part (~1 KB each: at most ~32 MB). */
const MIDDLE_SLOTS = 1 << 15;

interface MiddleEntry {
  index: object;
  recordId: number;
  offset: string | null;
  owner: string | null;
  policy: Policy;
  text: string;
}

/** Serialized full v1 objects. */
export class V1BodyCache {
  private readonly scored = new ScoredPartCache();
  /** `location` through `routing` of recently answered records, one slot per record id modulo the size. */
  private readonly middles: (MiddleEntry | undefined)[] = new Array(MIDDLE_SLOTS);

  /** Distinct scoring views held (a few hundred on real indexes). */
  get views(): number {
    return this.scored.size;
  }

  /** JSON text equal to JSON.stringify(buildV1(hit, ctx, null)). */
  body(hit: LookupHit, ctx: V1Context): string {
    // A crawler proof changes classification for this address alone: never shared.
    if (ctx.scoring.verifiedCrawler !== null) return JSON.stringify(buildV1(hit, ctx, null));
    const record = hit.record;
    const scored = this.scored.get(record, ctx);
    return `{"ip":${JSON.stringify(hit.ip)},"stack":"${hit.family === 4 ? 'ipv4' : 'ipv6'}",${this.middle(hit, scored.classification, ctx)}${scored.text}`;
  }

  /** `"location":...,"network":...,"routing":...,` of a hit's record, reused while the index, record id, zone offset, owner and policy are the same. */
  private middle(hit: LookupHit, classification: Classification, ctx: V1Context): string {
    const record = hit.record;
    const offset = record.geo?.timezone ? utcOffset(record.geo.timezone, ctx.now) : null;
    const owner = ctx.rdapOwner ?? null;
    const index = hit.index;
    const slot = hit.recordId & (MIDDLE_SLOTS - 1);
    const e = this.middles[slot];
    // Same index (a reload brings another) and same record id: the same facts.
    if (e !== undefined && e.index === index && e.recordId === hit.recordId && e.offset === offset && e.owner === owner && e.policy === ctx.policy) return e.text;
    const text =
      `"location":${JSON.stringify(locationOf(record, ctx.now))},` +
      `"network":${JSON.stringify(networkOf(record, classification, owner))},` +
      `"routing":${JSON.stringify(routingOf(record))},`;
    // Hand-made hits (tests, the scoring view) name no index: nothing to key them by.
    if (index !== undefined) this.middles[slot] = { index, recordId: hit.recordId, offset, owner, policy: ctx.policy, text };
    return text;
  }
}
