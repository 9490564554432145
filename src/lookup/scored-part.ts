/**
 * The scored part of the v1 object (score, classification, evidence,
 * decision, scores, scenarios, explanation) as JSON text, shared by every
 * record with the same scoring facts.
 *
 * Scoring reads few facts of a record: its flags, its network type, which layers are present,
 * the route's RPKI state and origin conflict, the special-use kind, the
 * threat-feed metadata, and the operator name (in the explanation summary
 * only). Records differ in much more (prefix, allocation, geo), so there are
 * about a million records but only a few hundred distinct *scoring views*.
 * The view keeps exactly those facts; its text is computed once per view and
 * policy, with the operator name spliced in per answer.
 *
 * Exactness is tested: for generated records (every field varied) and for
 * real ones, the text equals serializing the record's own scored fields.
 */
import type { IndexRecord, NetworkType } from '../index/record.ts';
import { NETWORK_TYPE_CODES } from '../index/format.ts';
import { networkContext, type Classification, type Coverage, type Policy } from '../scoring/index.ts';
import { buildV1, type V1Context } from './v1.ts';

/** Top-level fields the scored part holds, in v1 order. */
export const SCORED_PART_FIELDS: ReadonlySet<string> = new Set(['score', 'classification', 'evidence', 'decision', 'scores', 'scenarios', 'explanation']);

/** Stands in for the operator name in a view; a NUL never occurs in feed names (JSON escapes it). */
const OPERATOR = '\u0000operator\u0000';
const OPERATOR_JSON = JSON.stringify(OPERATOR).slice(1, -1);

/** A name as the view keeps it: null and empty stay what they are, any other text is the placeholder. */
const viewName = (name: string | null) => (name === null || name === '' ? name : OPERATOR);

const PRESENT_GEO = Object.freeze({ countryCode: null, region: null, city: null, postalCode: null, latitude: null, longitude: null, timezone: null });
const PRESENT_ALLOCATION = Object.freeze({ cidr: null, range: '', registry: '', countryCode: null, status: '', date: null });
const PRESENT_THREAT_LIST = Object.freeze({ list: '', reference: null });

const RPKI_CODE: Readonly<Record<string, number>> = { valid: 0, invalid: 1, not_found: 2, unknown: 3 };
const NAME_CODE = (name: string | null) => (name === null ? 1 : name === '' ? 2 : 3);
/** Flag bits a record may carry (src/index/record.ts Flag); anything above takes the text key. */
const FLAG_BITS = 19;
/** The network type code goes above the 30 packed bits (exact in a double: at most 2^34). */
const NETWORK_TYPE_UNIT = 2 ** 30;
const NETWORK_TYPE_KEY = Object.fromEntries(NETWORK_TYPE_CODES.map((t, i) => [t, i * NETWORK_TYPE_UNIT])) as Readonly<Record<NetworkType, number>>;

/**
 * The scoring facts of a record: equal keys mean equal scored parts. Most
 * records (no special-use block, provider or threat-feed entry) get a number
 * packing the facts into 30 bits, cheap to build and to hash on every
 * request; the rest a text key.
 */
export function scoringKey(r: IndexRecord): number | string {
  const route = r.route;
  const rpki = route ? RPKI_CODE[route.rpkiStatus] : 0;
  if (r.specialUse !== null || r.provider !== null || r.threatFeed !== null || r.flags >>> FLAG_BITS !== 0 || rpki === undefined) return textKey(r);
  // bits 0-18 flags, 19 geo, 20 allocation, 21 crawler, 22 threat list, 23-27 route (0 none), 28-29 ASN name state (0 no ASN).
  const routeCode = route ? 1 + rpki * 4 + (route.originConflict ? 2 : 0) + (route.originAsn === null ? 1 : 0) : 0;
  const packed =
    r.flags |
    ((r.geo ? 1 : 0) << 19) |
    ((r.allocation ? 1 : 0) << 20) |
    ((r.crawler === null ? 0 : 1) << 21) |
    ((r.threatList ? 1 : 0) << 22) |
    (routeCode << 23) |
    ((r.asn ? NAME_CODE(r.asn.name) : 0) << 28);
  return r.networkType === null ? packed : packed + NETWORK_TYPE_KEY[r.networkType];
}

/** The scoring facts as text, for the records scoringKey does not pack: the scoring view itself. */
function textKey(r: IndexRecord): string {
  return JSON.stringify(scoringView(r));
}

/** A record holding only the facts of scoringKey (operator names replaced by a placeholder). */
export function scoringView(r: IndexRecord): IndexRecord {
  const route = r.route;
  const special = r.specialUse;
  return {
    flags: r.flags,
    geo: r.geo ? PRESENT_GEO : null,
    asn: r.asn ? { asn: 0, name: viewName(r.asn.name) } : null,
    allocation: r.allocation ? PRESENT_ALLOCATION : null,
    route: route ? { prefix: '', originAsn: route.originAsn === null ? null : 0, origins: [], rpkiStatus: route.rpkiStatus, originConflict: route.originConflict } : null,
    provider: r.provider ? { name: viewName(r.provider.name), category: r.provider.category, service: null, region: null } : null,
    crawler: r.crawler === null ? null : '',
    specialUse: special ? { name: '', cidr: '', rfc: '', kind: special.kind, globallyReachable: special.globallyReachable } : null,
    threatList: r.threatList ? PRESENT_THREAT_LIST : null,
    threatFeed: r.threatFeed,
    networkType: r.networkType,
  };
}

interface ScoredPart {
  /** Classification of the view, equal to the record's. */
  classification: Classification;
  /** The text split where the operator name goes (one piece when it does not appear). */
  pieces: string[];
}

/** Above this many views per policy the memo starts over (real indexes have a few hundred). */
const MAX_VIEWS = 50_000;

/** Characters JSON.stringify escapes in a string: quote, backslash, controls, lone surrogates. */
const NEEDS_JSON_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A record's scored part as text: `head + operator + rest` (see ScoredPartCache.get). */
export interface ScoredText {
  classification: Classification;
  head: string;
  operator: string;
  rest: string;
}

/** Scored parts memoised per scoring view and policy. */
export class ScoredPartCache {
  private policy: Policy | null = null;
  private coverage: Coverage | undefined = undefined;
  private readonly parts = new Map<number | string, ScoredPart>();

  /** Number of views held (for tests and metrics). */
  get size(): number {
    return this.parts.size;
  }

  /**
   * The record's classification and its scored part as text without the
   * opening brace (`"score":...}`): `head + operator + rest`, where head and
   * rest are shared by the view and operator is the record's operator name
   * as JSON (one string per name); ctx.scoring must hold no crawler proof.
   */
  get(record: IndexRecord, ctx: V1Context): ScoredText {
    // The scored part depends on the policy and on the index's coverage (one object per index and staleness state).
    if (ctx.policy !== this.policy || ctx.scoring.coverage !== this.coverage) {
      this.policy = ctx.policy;
      this.coverage = ctx.scoring.coverage;
      this.parts.clear();
    }
    const key = scoringKey(record);
    let part = this.parts.get(key);
    if (part === undefined) {
      if (this.parts.size >= MAX_VIEWS) this.parts.clear();
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
    // rescan all of it (BENCHMARKS.md, sixth session).
    return NEEDS_JSON_ESCAPE.test(name) ? JSON.stringify(name).slice(1, -1) : name;
  }

  private compute(record: IndexRecord, ctx: V1Context): ScoredPart {
    const view = scoringView(record);
    const hit = { family: 4 as const, ip: '', rangeStart: '', rangeEnd: '', recordId: 0, record: view };
    const obj = buildV1(hit, { ...ctx, rdapOwner: null }, SCORED_PART_FIELDS) as { classification: Classification };
    return { classification: obj.classification, pieces: JSON.stringify(obj).slice(1).split(OPERATOR_JSON) };
  }
}
