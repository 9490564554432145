/**
 * The full v1 body as JSON text, composed from parts: `ip` and `stack` per
 * address; `location`, `network` and `routing` serialized per record; and
 * the scored part (score through explanation, the larger and costlier part)
 * shared by every record with the same scoring facts (scored-part.ts). A
 * record's tail (all but ip and stack) is kept in a bounded memo that keeps
 * the records asked most often (record-memo.ts). A miss decodes the record
 * and serializes its own part; a hit reads neither (BENCHMARKS.md, "Measured
 * changes in the code").
 *
 * One memo per serving snapshot (src/lookup/serving.ts): its index, policy
 * and coverage are fixed for the memo's life, so nothing here checks whether
 * they changed.
 */
import type { IndexRecord, LookupHit } from '../index/record.ts';
import type { Coverage, Policy, ScoringContext } from '../scoring/index.ts';
import { TAIL_SLOTS } from './memo-sizes.ts';
import { isHitOf, RecordMemo } from './record-memo.ts';
import { ScoredPartCache, type ScoredText } from './scored-part.ts';
import { QUARTER_HOUR } from './timezone.ts';
import { buildV1, needsScoring, locationOf, networkOf, routingOf, type V1Context } from './v1.ts';
import { isLeadOnly, projectV1Lead, projectV1Text } from './v1-projected-text.ts';

/**
 * What a memo slot holds: the body after `"stack":…,` is the concatenation
 * of these four, in this order. OWN is the record's `"location":…,"routing":{…}`,
 * its serialization without the braces (a substring sharing its characters,
 * never copied); the others come from ScoredPartCache (HEAD opens with the
 * comma after OWN) and are shared with other records, so they are usually in
 * cache when a body is written.
 */
const OWN = 0;
const HEAD = 1;
const OPERATOR = 2;
const REST = 3;
const PARTS = 4;

/** Stamp of a body with no time zone: valid at any time (others hold for the quarter hour they were made in, timezone.ts). */
const TIMELESS = -1;

/** A whole v1 body as three texts (V1BodyCache.bodyParts). */
export interface BodyParts {
  prefix: string;
  own: string;
  scored: string;
}

/** The `stack` member's value of a hit. */
function stackOf(hit: LookupHit): string {
  return hit.family === 4 ? 'ipv4' : 'ipv6';
}

/** A whole body's text split as bodyParts splits it: before `location`, at the comma before `score` (top-level markers: v1-projected-text.ts). */
function splitWhole(whole: string): BodyParts {
  const own = whole.indexOf(',"location":') + 1;
  const scored = whole.indexOf(',"score":', own);
  return { prefix: whole.slice(0, own), own: whole.slice(own, scored), scored: whole.slice(scored) };
}

/** What a memo's answers share: the facts of one serving snapshot. */
export interface BodyFacts {
  /** The index whose hits the memo keeps (hits of any other are answered unmemoised). */
  readonly reader: object | null;
  readonly policy: Policy;
  readonly coverage: Coverage;
}

/** What an answer adds to its snapshot's facts: the crawler proof, the RDAP owner, the clock. */
export interface AnswerFacts {
  verifiedCrawler: ScoringContext['verifiedCrawler'];
  /** RDAP owner when an RDAP answer is cached or fetched for this address. */
  rdapOwner: string | null;
  now: number | undefined;
}

/** Serialized full v1 objects of one snapshot. */
export class V1BodyCache {
  private readonly scored: ScoredPartCache;
  /**
   * Body parts of the records asked most often lately, by record id, stamped
   * with their quarter hour. Made on the first hit (its tables are large): a
   * memo that only ever sees hand-made hits never needs it.
   */
  private tails: RecordMemo<string> | null = null;

  /** `facts`: the snapshot's; `tailSlots`: slots of the per-record memo (a power of two); `scoredViews`: views the scored memo holds. */
  constructor(
    readonly facts: BodyFacts,
    private readonly tailSlots = TAIL_SLOTS,
    scoredViews?: number,
  ) {
    this.scored = new ScoredPartCache(scoredViews);
  }

  /** Distinct scoring views held (a few hundred on real indexes). */
  get views(): number {
    return this.scored.size;
  }

  /** The v1 context of an answer under this memo's snapshot. */
  context(answer: AnswerFacts): V1Context {
    const f = this.facts;
    return { scoring: { verifiedCrawler: answer.verifiedCrawler, coverage: f.coverage }, policy: f.policy, rdapOwner: answer.rdapOwner, now: answer.now };
  }

  /**
   * Whether the memo holds a body tail for this hit's record (it then answers
   * without reading the record's row, which on random traffic is a cache miss).
   */
  holds(hit: LookupHit): boolean {
    return isHitOf(hit, this.facts.reader) && this.tails !== null && this.tails.find(hit.recordId) >= 0;
  }

  /** JSON text equal to JSON.stringify(buildV1(hit, this.context(answer), null)). */
  body(hit: LookupHit, answer: AnswerFacts): string {
    const p = this.bodyParts(hit, answer);
    return `${p.prefix}${p.own}${p.scored}`;
  }

  /**
   * The whole body in three parts: `prefix` (`{"ip":…,"stack":…,`), the
   * record's `own` part (`"location":…,"routing":{…}`), then `scored` from
   * the comma before `"score":` to the closing brace. A projection of the
   * first five fields alone reads only the record's part (`lead`).
   */
  bodyParts(hit: LookupHit, answer: AnswerFacts): BodyParts {
    // A crawler proof changes classification for this address alone: never shared.
    if (answer.verifiedCrawler !== null) return splitWhole(JSON.stringify(buildV1(hit, this.context(answer), null)));
    // Canonical address text (digits, hex, '.' and ':') needs no JSON escaping.
    const prefix = `{"ip":"${hit.ip}","stack":"${stackOf(hit)}",`;
    const at = this.heldAt(hit, answer);
    if (at >= 0) {
      const tails = this.tails!;
      return { prefix, own: tails.value(at, OWN)!, scored: `${tails.value(at, HEAD)}${tails.value(at, OPERATOR)}${tails.value(at, REST)}` };
    }
    const { own, scored } = this.made(hit, answer);
    return { prefix, own, scored: `${scored.head}${scored.operator}${scored.rest}` };
  }

  /**
   * projectV1Lead of this hit's body for `fields` all among the lead fields:
   * it reads the record's own part alone, so a memo hit joins no scored text.
   */
  lead(hit: LookupHit, answer: AnswerFacts, fields: ReadonlySet<string>): string {
    let own: string;
    if (answer.verifiedCrawler !== null) own = splitWhole(JSON.stringify(buildV1(hit, this.context(answer), null))).own;
    else {
      const at = this.heldAt(hit, answer);
      own = at >= 0 ? this.tails!.value(at, OWN)! : this.made(hit, answer).own;
    }
    return projectV1Lead(hit.ip, stackOf(hit), own, fields);
  }

  /**
   * The memo slot holding this hit's body tail, valid now (same quarter hour
   * for a record with a time zone), or -1; counts the ask (TinyLFU). A hit
   * of another index or an answer naming an RDAP owner (known for few
   * addresses: it replaces network.owner) is never memoised: -1.
   */
  private heldAt(hit: LookupHit, answer: AnswerFacts): number {
    if (!isHitOf(hit, this.facts.reader) || answer.rdapOwner != null) return -1;
    let tails = this.tails;
    if (tails === null) tails = this.tails = new RecordMemo<string>(this.tailSlots, PARTS);
    const id = hit.recordId;
    tails.touch(id);
    const at = tails.find(id);
    if (at < 0) return -1;
    const stamp = tails.stamp(at);
    // Same snapshot and record id: the same facts; same quarter hour: the same zone offset.
    return stamp === TIMELESS || stamp === Math.floor((answer.now ?? Date.now()) / QUARTER_HOUR) ? at : -1;
  }

  /** The tail of a body heldAt found no slot for, made, and kept when memoisable and admitted. */
  private made(hit: LookupHit, answer: AnswerFacts): { own: string; scored: ScoredText } {
    const record = hit.record;
    if (!isHitOf(hit, this.facts.reader) || answer.rdapOwner != null) return this.parts(record, this.context(answer), answer.now);
    // The clock read once: the parts and their stamp agree on the quarter hour.
    const now = answer.now ?? Date.now();
    const made = this.parts(record, this.context(answer), now);
    const at = this.tails!.admit(hit.recordId, record.geo?.timezone ? Math.floor(now / QUARTER_HOUR) : TIMELESS);
    if (at >= 0) {
      const tails = this.tails!;
      tails.set(at, OWN, made.own);
      tails.set(at, HEAD, made.scored.head);
      tails.set(at, OPERATOR, made.scored.operator);
      tails.set(at, REST, made.scored.rest);
    }
    return made;
  }

  /** A record's own part (`"location":…,"routing":{…}`) and its scored part. */
  private parts(record: IndexRecord, ctx: V1Context, now: number | undefined): { own: string; scored: ScoredText } {
    const scored = this.scored.get(record, ctx);
    // One serialization of the record's own fields (not three joined). Its braces are cut
    // as a substring sharing the serialization's characters, so a memo hit still reaches
    // them through one string and a miss copies nothing (the comma after it opens the
    // scored part: BENCHMARKS.md, "Measured changes in the code").
    const own = JSON.stringify({ location: locationOf(record, now), network: networkOf(record, scored.classification, ctx.rdapOwner ?? null, ctx.scoring.coverage), routing: routingOf(record) });
    return { own: own.slice(1, -1), scored };
  }
}

/**
 * The v1 body of an address under a snapshot's memo, as JSON text: the whole
 * object (memoised) when `fields` is null and no RDAP object is added, else
 * the requested fields with `rdap` (the Pro include) when given.
 */
export function v1BodyText(bodies: V1BodyCache, hit: LookupHit, answer: AnswerFacts, fields: ReadonlySet<string> | null = null, rdap: object | null = null): string {
  if (fields === null && rdap === null) return bodies.body(hit, answer);
  // Scored fields are cut from the memoised whole body (same facts, so the same members).
  if (rdap === null && fields !== null && needsScoring(fields)) {
    if (isLeadOnly(fields)) return bodies.lead(hit, answer, fields);
    const parts = bodies.bodyParts(hit, answer);
    return projectV1Text(`${parts.prefix}${parts.own}${parts.scored}`, fields);
  }
  const body = buildV1(hit, bodies.context(answer), fields);
  if (rdap !== null) body.rdap = rdap;
  return JSON.stringify(body);
}
