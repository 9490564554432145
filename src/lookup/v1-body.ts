/**
 * The full v1 body as JSON text, with everything but `ip` and `stack`
 * serialized once per index record and reused. Building the decision objects
 * and serializing ~3 KB of nested JSON is most of a lookup's cost, and every
 * address of a record (an interval of the index) shares those bytes: only
 * `ip` and `stack` are per address.
 *
 * Reuse is exact: an entry is used only for the same record object, the same
 * policy object, the same RDAP owner, no verified-crawler proof, and the same
 * current UTC offset of the record's time zone (DST changes it). A reload
 * brings new record objects, so old entries are never hit again and age out.
 *
 * The memo is an LRU bounded by the bytes of text it holds (default 32 MB):
 * uniformly random traffic touches tens of thousands of records per 100 000
 * requests, and an unbounded map would hold a ~3 KB string for every record
 * the reader keeps decoded.
 */
import { LRUCache } from 'lru-cache';
import type { IndexRecord, LookupHit } from '../index/record.ts';
import type { Policy } from '../scoring/index.ts';
import { utcOffset } from './timezone.ts';
import { buildV1, V1_FIELDS, type V1Context } from './v1.ts';

interface Entry {
  /** The serialized object from `location` on, without its opening brace. */
  tail: string;
  policy: Policy;
  owner: string | null;
  offset: string | null;
}

/** Every v1 field except the per-address ones. */
const SHARED_FIELDS: ReadonlySet<string> = new Set(V1_FIELDS.filter((f) => f !== 'ip' && f !== 'stack'));

const offsetOf = (record: IndexRecord, now: number | undefined) => (record.geo?.timezone ? utcOffset(record.geo.timezone, now) : null);

/** Default bound of the memo: characters of serialized text held. */
export const V1_BODY_CACHE_CHARS = 32 * 1024 * 1024;

/** Serialized full v1 objects with their shared part memoised per index record. */
export class V1BodyCache {
  private readonly entries: LRUCache<IndexRecord, Entry>;
  private generation = 0;

  constructor(maxChars: number = V1_BODY_CACHE_CHARS) {
    this.entries = new LRUCache<IndexRecord, Entry>({ maxSize: maxChars, sizeCalculation: (e) => Math.max(1, e.tail.length) });
  }

  /** Characters of text the memo holds now (bounded by the constructor's limit). */
  get heldChars(): number {
    return this.entries.calculatedSize;
  }

  /**
   * Tells the memo which index generation is serving. A reload makes every
   * entry unreachable (new record objects), so they are dropped at once
   * rather than held until the LRU pushes them out.
   */
  useGeneration(generation: number): void {
    if (generation === this.generation) return;
    this.generation = generation;
    this.entries.clear();
  }

  /** JSON text equal to JSON.stringify(buildV1(hit, ctx, null)). */
  body(hit: LookupHit, ctx: V1Context): string {
    // A crawler proof changes classification for this address alone: never shared.
    if (ctx.scoring.verifiedCrawler !== null) return JSON.stringify(buildV1(hit, ctx, null));
    const record = hit.record;
    const owner = ctx.rdapOwner ?? null;
    const offset = offsetOf(record, ctx.now);
    let e = this.entries.get(record);
    if (e === undefined || e.policy !== ctx.policy || e.owner !== owner || e.offset !== offset) {
      e = { tail: JSON.stringify(buildV1(hit, ctx, SHARED_FIELDS)).slice(1), policy: ctx.policy, owner, offset };
      this.entries.set(record, e);
    }
    return `{"ip":${JSON.stringify(hit.ip)},"stack":"${hit.family === 4 ? 'ipv4' : 'ipv6'}",${e.tail}`;
  }
}
