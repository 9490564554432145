/**
 * The scored part of the v1 object (score, classification, evidence,
 * decision, scores, scenarios, explanation) as JSON text, shared by every
 * record with the same scoring facts.
 *
 * Scoring reads few facts of a record (its scoring view, scoring/view.ts).
 * Records differ in much more (prefix, allocation, geo), so there are about
 * a million records but only a few hundred distinct views. The text of a
 * view is computed once per view and policy, with the operator name spliced
 * in per answer.
 *
 * Exactness is tested: for generated records (every field varied) and for
 * real ones, the text equals serializing the record's own scored fields.
 */
import type { IndexRecord } from '../index/record.ts';
import { networkContext, OPERATOR_PLACEHOLDER, scoringKey, scoringView, type Classification } from '../scoring/index.ts';
import { buildV1, type V1Context } from './v1.ts';
import { MAX_VIEWS } from './memo-sizes.ts';

/** Top-level fields the scored part holds, in v1 order. */
export const SCORED_PART_FIELDS: ReadonlySet<string> = new Set(['score', 'classification', 'evidence', 'decision', 'scores', 'scenarios', 'explanation']);

/** The operator name's placeholder as it appears inside the view's JSON text. */
const OPERATOR_JSON = JSON.stringify(OPERATOR_PLACEHOLDER).slice(1, -1);

interface ScoredPart {
  /** Classification of the view, equal to the record's. */
  classification: Classification;
  /** The text split where the operator name goes (one piece when it does not appear). */
  pieces: string[];
}


/** Characters JSON.stringify escapes in a string: quote, backslash, controls, lone surrogates. */
const NEEDS_JSON_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A record's scored part as text: `head + operator + rest` (see ScoredPartCache.get). */
export interface ScoredText {
  classification: Classification;
  head: string;
  operator: string;
  rest: string;
}

/**
 * Scored parts memoised per scoring view, for one serving snapshot (its
 * policy and coverage are fixed for the memo's life: V1BodyCache).
 */
export class ScoredPartCache {
  private readonly parts = new Map<number | string, ScoredPart>();

  /** `maxViews`: views held before the memo starts over. */
  constructor(private readonly maxViews = MAX_VIEWS) {}

  /** Number of views held (for tests and metrics). */
  get size(): number {
    return this.parts.size;
  }

  /**
   * The record's classification and its scored part as text, the opening
   * brace replaced by the comma before it in the v1 body (`,"score":...}`):
   * `head + operator + rest`, where head and
   * rest are shared by the view and operator is the record's operator name
   * as JSON (one string per name); ctx.scoring must hold no crawler proof,
   * and ctx's policy and coverage must be the snapshot's this memo belongs to.
   */
  get(record: IndexRecord, ctx: V1Context): ScoredText {
    const key = scoringKey(record, ctx.scoring.coverage);
    let part = this.parts.get(key);
    if (part === undefined) {
      if (this.parts.size >= this.maxViews) this.parts.clear();
      part = this.compute(record, ctx);
      this.parts.set(key, part);
    }
    const { classification, pieces } = part;
    if (pieces.length === 1) return { classification, head: pieces[0], operator: '', rest: '' };
    const operator = this.operatorJson(networkContext(record, classification).operator ?? '');
    if (pieces.length === 2) return { classification, head: pieces[0], operator, rest: pieces[1] };
    return { classification, head: pieces.join(operator), operator: '', rest: '' };
  }

  /** A name as JSON string content: the name itself unless it has characters JSON escapes (then a new string). */
  private operatorJson(name: string): string {
    // The same name is then the same string for every record while the string table's
    // cache holds it, which a body memoised per record (v1-body.ts) finds in cache. No
    // table of names here: one store into a large old Map makes every young collection
    // rescan all of it.
    return NEEDS_JSON_ESCAPE.test(name) ? JSON.stringify(name).slice(1, -1) : name;
  }

  private compute(record: IndexRecord, ctx: V1Context): ScoredPart {
    const view = scoringView(record, ctx.scoring.coverage);
    const hit = { family: 4 as const, ip: '', rangeStart: '', rangeEnd: '', recordId: 0, record: view };
    const obj = buildV1(hit, { ...ctx, rdapOwner: null }, SCORED_PART_FIELDS) as { classification: Classification };
    // The comma that follows the record's own part opens the text (v1-body.ts).
    return { classification: obj.classification, pieces: `,${JSON.stringify(obj).slice(1)}`.split(OPERATOR_JSON) };
  }
}
