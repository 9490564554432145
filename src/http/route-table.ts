/**
 * The route table: the routes declared once (routes/table.ts) as a router.
 * Which declaration a path belongs to (its handler, the metrics label, the
 * representation of its errors, its rate-limit policy) and which methods
 * it answers (405 with `Allow`; HEAD wherever GET is). A static segment
 * beats a parameter, a parameter beats a wildcard, a parameter is never
 * empty, and one trailing slash is ignored. Matching walks the path in
 * place: no allocation per request.
 */
import type { Caller } from './caller.ts';
import type { OperationName } from './openapi/operations.ts';
import type { RateDecision } from './ratelimit/index.ts';

/** The label of every path that is no route: one label for all of them keeps metrics bounded. */
export const OTHER_ROUTE = 'other';

/** CORS preflights: answered on every path (server.ts), so listed in every `Allow`. */
const PREFLIGHT = 'OPTIONS';

/** The methods a route declares a handler for (`ALL`: any method, no 405). */
export type RouteMethod = 'GET' | 'POST' | 'DELETE' | 'ALL';

/**
 * A route's answer: `path` is the request's path (no query, undecoded),
 * `hasQuery` whether the URL has a query string, `caller` who is asking.
 * Throws ApiError for the spec's errors.
 */
/**
 * A route's handler. `limit`: the admitted caller's rate decision (null when
 * none was taken), for a route that adds its own rate-limit headers.
 */
export type RouteHandler = (request: Request, path: string, hasQuery: boolean, caller: Caller, limit: RateDecision | null) => Response | Promise<Response>;

/** One route as declared: the handlers by method and everything derived from it. */
export interface RouteDeclaration<H> {
  /** The pattern in the `{param}` form (`/v1/ip/{ip}`; `/*` ends a folder): the metrics label and the OpenAPI path. */
  readonly path: string;
  /** Handlers by method, in the order `Allow` lists them. */
  readonly handlers: Readonly<Partial<Record<RouteMethod, H>>>;
  /** Takes no rate-limit token (and reads no API key). */
  readonly exemptFromRateLimit?: boolean;
  /** Reads the admin token: a wrong one spends the caller's admin budget (ratelimit/admin-budget.ts). */
  readonly readsAdminToken?: boolean;
  /** Also answered by a publisher (IPINTEL_ROLE=publisher), which answers nothing else. */
  readonly publisher?: boolean;
  /** Errors are negotiated as one line of text like the answers (legacy routes, spec 4.6 rule 6). */
  readonly textErrors?: boolean;
  /**
   * The handler's answers are built from prebuilt header sets that carry the
   * CORS headers and a Cache-Control (the lookups): the request path then
   * leaves them untouched unless it adds rate-limit headers, since reading an
   * answer's headers costs more than the rest of the request path.
   */
  readonly prebuiltHeaders?: boolean;
  /**
   * With `prebuiltHeaders`: the handler also puts the rate-limit headers
   * (spec 8) into the answers it builds from the decision it is passed, so
   * the request path never reads back an answer's headers (only errors it
   * throws are completed by the request path).
   */
  readonly ratesItself?: boolean;
  /** The OpenAPI operation of each method (openapi/operations.ts); absent: undocumented. */
  readonly operations?: Readonly<Partial<Record<'get' | 'post' | 'delete', OperationName>>>;
}

/** One route of the table, as matched. */
export interface RouteEntry<H = RouteHandler> {
  /** The pattern in the `{param}` form (`/v1/ip/{ip}`): the metrics label. */
  readonly label: string;
  /** Position in the table (for per-route state kept by the caller). */
  readonly id: number;
  /** The `Allow` header value of a 405 on this pattern ('' on an `ALL` route, which answers every method). */
  readonly allow: string;
  readonly handlers: Readonly<Partial<Record<RouteMethod, H>>>;
  readonly exemptFromRateLimit: boolean;
  readonly readsAdminToken: boolean;
  readonly publisher: boolean;
  readonly textErrors: boolean;
  readonly prebuiltHeaders: boolean;
  readonly ratesItself: boolean;
}

/** A pattern segment: static text, a parameter, or a wildcard (the rest of the path). One shape for all kinds keeps matching monomorphic. */
interface Segment {
  kind: number;
  /** The static text ('' for the other kinds). */
  text: string;
}
const STATIC = 0;
const PARAM = 1;
const WILDCARD = 2;

interface Pattern<H> {
  entry: RouteEntry<H>;
  segments: Segment[];
  /** Paths this pattern matches that are no route (see the constructor). */
  notRoutes: string[];
}

/** The handler of a method on a route: its own, the GET handler for HEAD, else the `ALL` one; undefined when the method is not answered. */
export function handlerFor<H>(entry: RouteEntry<H>, method: string): H | undefined {
  const handlers = entry.handlers;
  if (method === 'GET' || method === 'HEAD') return handlers.GET ?? handlers.ALL;
  if (method === 'POST') return handlers.POST ?? handlers.ALL;
  if (method === 'DELETE') return handlers.DELETE ?? handlers.ALL;
  return handlers.ALL;
}

/** Declared routes as a router. */
export class RouteTable<H = RouteHandler> {
  /** Patterns without a wildcard, by segment count, most specific first. */
  private readonly bySegments: Pattern<H>[][] = [];
  /** Patterns ending in a wildcard, most specific first. */
  private readonly wildcards: Pattern<H>[] = [];
  /** The most segments of any pattern: a longer path can only match a wildcard. */
  private readonly maxSegments: number;
  /** Scratch for find(): where each segment of the path starts; safe to share, find() never yields before it is done with it. */
  private readonly segmentStarts: Int32Array;
  /** Every entry, in declaration order (entry.id is the position). */
  readonly entries: readonly RouteEntry<H>[];
  /** Every distinct label (the metrics route label set, with OTHER_ROUTE). */
  readonly labels: readonly string[];

  /** `notRoutes`: exact paths that no pattern answers although one would match them. */
  constructor(declarations: readonly RouteDeclaration<H>[], notRoutes: readonly string[] = []) {
    const patterns: Pattern<H>[] = declarations.map((d, id) => {
      const methods = Object.keys(d.handlers) as RouteMethod[];
      const anyMethod = methods.includes('ALL');
      const allowed: string[] = methods.filter((m) => m !== 'ALL');
      if (allowed.includes('GET')) allowed.push('HEAD');
      allowed.push(PREFLIGHT);
      const entry: RouteEntry<H> = {
        label: d.path,
        id,
        allow: anyMethod ? '' : allowed.join(', '),
        handlers: d.handlers,
        exemptFromRateLimit: d.exemptFromRateLimit === true,
        readsAdminToken: d.readsAdminToken === true,
        publisher: d.publisher === true,
        textErrors: d.textErrors === true,
        prebuiltHeaders: d.prebuiltHeaders === true,
        ratesItself: d.prebuiltHeaders === true && d.ratesItself === true,
      };
      return { entry, segments: segmentsOf(d.path), notRoutes: [] };
    });
    this.entries = patterns.map((p) => p.entry);
    const sorted = [...patterns].sort((a, b) => compareSpecificity(a.segments, b.segments));
    for (const p of sorted) {
      if (p.segments.at(-1)?.kind === WILDCARD) this.wildcards.push(p);
      else (this.bySegments[p.segments.length] ??= []).push(p);
    }
    this.maxSegments = Math.max(1, ...patterns.map((p) => p.segments.length));
    this.segmentStarts = new Int32Array(this.maxSegments + 2);
    // Each exception is held by the pattern it would match: the others never look at it.
    for (const path of notRoutes) {
      const p = this.find(path, 0, path.length);
      if (p) p.notRoutes.push(path);
    }
    this.labels = [...new Set(patterns.map((p) => p.entry.label)), OTHER_ROUTE];
  }

  /** The route a path (starts with "/", no query) belongs to; null when none. */
  match(path: string): RouteEntry<H> | null {
    return this.matchIn(path, 0, path.length);
  }

  /**
   * The route of the path `text[start..end)`, e.g. inside request.url: read in
   * place, because reading characters of a slice first copies it.
   */
  matchIn(text: string, start: number, end: number): RouteEntry<H> | null {
    const p = this.find(text, start, end);
    if (p === null) return null;
    for (let i = 0; i < p.notRoutes.length; i++) if (sameText(p.notRoutes[i], text, start, end)) return null;
    return p.entry;
  }

  /** The most specific pattern matching `text[start..end)`, as the router picks it. */
  private find(text: string, start: number, end: number): Pattern<H> | null {
    // One trailing slash is ignored ("/health/" is "/health"), as the router does; "//" is not "/".
    if (end - start > 2 && text.charCodeAt(end - 1) === 47) end--;
    // Where each segment starts (after its "/"), found in one pass; the array is reused.
    const starts = this.segmentStarts;
    let count = 0;
    for (let i = start; i < end; i++) {
      if (text.charCodeAt(i) === 47) {
        if (count === this.maxSegments) return this.findWildcard(text, starts, count);
        starts[count++] = i + 1;
      }
    }
    starts[count] = end + 1;
    const candidates = this.bySegments[count];
    if (candidates !== undefined) {
      for (let i = 0; i < candidates.length; i++) {
        if (matches(candidates[i].segments, text, starts, count)) return candidates[i];
      }
    }
    return this.findWildcard(text, starts, count);
  }

  /** The first wildcard pattern whose leading segments match (it takes whatever follows, even nothing). */
  private findWildcard(text: string, starts: Int32Array, count: number): Pattern<H> | null {
    for (let i = 0; i < this.wildcards.length; i++) {
      const segments = this.wildcards[i].segments;
      if (count >= segments.length && matches(segments, text, starts, segments.length - 1)) return this.wildcards[i];
    }
    return null;
  }
}

/** Whether `text[start..end)` is `s`. */
function sameText(s: string, text: string, start: number, end: number): boolean {
  if (end - start !== s.length) return false;
  for (let i = 0; i < s.length; i++) if (text.charCodeAt(start + i) !== s.charCodeAt(i)) return false;
  return true;
}

/** The segments of a `{param}` pattern. */
function segmentsOf(path: string): Segment[] {
  if (path === '/') return [{ kind: STATIC, text: '' }];
  return path
    .slice(1)
    .split('/')
    .map((s): Segment => (s === '*' ? { kind: WILDCARD, text: '' } : s.startsWith('{') ? { kind: PARAM, text: '' } : { kind: STATIC, text: s }));
}

/** Router precedence: at the first segment where two patterns differ in kind, static < parameter < wildcard. */
function compareSpecificity(a: Segment[], b: Segment[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i].kind !== b[i].kind) return a[i].kind - b[i].kind;
  }
  return b.length - a.length;
}

/**
 * Whether the first `n` segments of a path match the first `n` pattern
 * segments: segment k runs from starts[k] to starts[k+1] - 1.
 */
function matches(segments: Segment[], text: string, starts: Int32Array, n: number): boolean {
  for (let k = 0; k < n; k++) {
    const seg = segments[k];
    const from = starts[k];
    const to = starts[k + 1] - 1;
    if (seg.kind === STATIC) {
      if (!sameText(seg.text, text, from, to)) return false;
    } else if (seg.kind === PARAM && to === from) return false; // an empty parameter
  }
  return true;
}
