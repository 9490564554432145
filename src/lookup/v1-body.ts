/**
 * The full v1 body as JSON text, composed from parts: `ip` and `stack` per
 * address, `location`, `network` and `routing` serialized per answer (small
 * objects), and the scored part (score through explanation, ~2.5 KB and most
 * of the cost) shared by every record with the same scoring facts
 * (scored-part.ts). Composition costs the same for every address, so
 * uniformly random traffic, which rarely repeats a record, is as cheap as
 * repeated traffic, and nothing per record is held in memory.
 */
import type { LookupHit } from '../index/record.ts';
import { ScoredPartCache } from './scored-part.ts';
import { buildV1, locationOf, networkOf, routingOf, type V1Context } from './v1.ts';

/** Serialized full v1 objects. */
export class V1BodyCache {
  private readonly scored = new ScoredPartCache();

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
    return (
      `{"ip":${JSON.stringify(hit.ip)},"stack":"${hit.family === 4 ? 'ipv4' : 'ipv6'}",` +
      `"location":${JSON.stringify(locationOf(record, ctx.now))},` +
      `"network":${JSON.stringify(networkOf(record, scored.classification, ctx.rdapOwner))},` +
      `"routing":${JSON.stringify(routingOf(record))},${scored.text}`
    );
  }
}
