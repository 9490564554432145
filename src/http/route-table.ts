/**
 * The app's routes as one table, read from the Elysia app itself: which
 * route pattern a path belongs to (the metrics label, the representation of
 * errors answered before the app) and which methods that pattern answers
 * (405 with `Allow`; HEAD wherever GET is). Matching
 * follows Elysia's router so both always name the same route (tested
 * against the router in test/http/route-table.test.ts): a static segment
 * beats a parameter, a parameter beats a wildcard, a parameter is never
 * empty, and one trailing slash is ignored. Matching walks the path in
 * place: no allocation per request.
 */

import { isExemptFromRateLimit } from './ratelimit/route-policy.ts';

/** The label of every path that is no route: one label for all of them keeps metrics bounded. */
export const OTHER_ROUTE = 'other';

/**
 * Single-segment paths that browsers and crawlers ask every site for: files,
 * not addresses, so 404 NOT_FOUND rather than the legacy `/{ip}` lookup's INVALID_IP.
 */
export const NOT_ADDRESSES: readonly string[] = ['/favicon.ico', '/robots.txt'];

/** CORS preflights: answered on every path (the CORS plugin's catch-all), so never a 405. */
const PREFLIGHT = 'OPTIONS';

/** One route pattern and the methods registered on it. */
export interface RouteEntry {
  /** The pattern in the `{param}` form (`/v1/ip/{ip}`): the metrics label. */
  readonly label: string;
  /** Whether any method is accepted (an Elysia `.all` route). */
  readonly anyMethod: boolean;
  /** Registered methods, upper case. */
  readonly methods: ReadonlySet<string>;
  /** The `Allow` header value of a 405 on this pattern. */
  readonly allow: string;
  /** Whether requests of this route take no rate-limit token (the rate-limit module's route policy, read once here). */
  readonly exemptFromRateLimit: boolean;
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

interface Pattern {
  entry: RouteEntry;
  segments: Segment[];
  /** Paths this pattern matches that are no route (see the constructor). */
  notRoutes: string[];
}

/** Whether a method is answered on a route. */
export function allowsMethod(entry: RouteEntry, method: string): boolean {
  if (entry.anyMethod || method === PREFLIGHT || entry.methods.has(method)) return true;
  return method === 'HEAD' && entry.methods.has('GET');
}

/** Route patterns of an app, matched the way its router matches them. */
export class RouteTable {
  /** Patterns without a wildcard, by segment count, most specific first. */
  private readonly bySegments: Pattern[][] = [];
  /** Patterns ending in a wildcard, most specific first. */
  private readonly wildcards: Pattern[] = [];
  /** The most segments of any pattern: a longer path can only match a wildcard. */
  private readonly maxSegments: number;
  /** Scratch for find(): where each segment of the path starts. */
  private readonly segmentStarts: Int32Array;
  /** Every distinct label (the metrics route label set, with OTHER_ROUTE). */
  readonly labels: readonly string[];

  /**
   * `routes` as Elysia lists them (`app.routes`); OPTIONS routes are the CORS
   * plugin's catch-alls and not resources. `notRoutes`: exact paths that no
   * pattern answers although one would match them.
   */
  constructor(routes: ReadonlyArray<{ method: string; path: string }>, notRoutes: readonly string[] = []) {
    const methodsByPath = new Map<string, Set<string>>();
    for (const r of routes) {
      const method = r.method.toUpperCase();
      if (method === PREFLIGHT) continue;
      const path = r.path.length > 1 && r.path.endsWith('/') ? r.path.slice(0, -1) : r.path;
      let methods = methodsByPath.get(path);
      if (!methods) methodsByPath.set(path, (methods = new Set()));
      methods.add(method);
    }
    const patterns: Pattern[] = [];
    for (const [path, methods] of methodsByPath) {
      const anyMethod = methods.has('ALL');
      const allowed = [...methods].filter((m) => m !== 'ALL');
      if (allowed.includes('GET')) allowed.push('HEAD');
      allowed.push(PREFLIGHT);
      const label = labelOf(path);
      const allow = anyMethod ? '' : [...new Set(allowed)].join(', ');
      // A parameter's pattern never names an exempt path: only static routes can be exempt.
      const entry: RouteEntry = { label, anyMethod, methods, allow, exemptFromRateLimit: !label.includes('{') && isExemptFromRateLimit('GET', label) };
      patterns.push({ entry, segments: segmentsOf(path), notRoutes: [] });
    }
    patterns.sort((a, b) => compareSpecificity(a.segments, b.segments));
    for (const p of patterns) {
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

  /** The entry of a label (`/v1/ip/{ip}`), or null when the app has no such route. */
  entry(label: string): RouteEntry | null {
    for (const list of [...this.bySegments, this.wildcards]) {
      const found = list?.find((p) => p.entry.label === label);
      if (found) return found.entry;
    }
    return null;
  }

  /** The route a path (starts with "/", no query) belongs to; null when none. */
  match(path: string): RouteEntry | null {
    return this.matchIn(path, 0, path.length);
  }

  /**
   * The route of the path `text[start..end)`, e.g. inside request.url: read in
   * place, because reading characters of a slice first copies it.
   */
  matchIn(text: string, start: number, end: number): RouteEntry | null {
    const p = this.find(text, start, end);
    if (p === null) return null;
    for (let i = 0; i < p.notRoutes.length; i++) if (sameText(p.notRoutes[i], text, start, end)) return null;
    return p.entry;
  }

  /** The most specific pattern matching `text[start..end)`, as the router picks it. */
  private find(text: string, start: number, end: number): Pattern | null {
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
  private findWildcard(text: string, starts: Int32Array, count: number): Pattern | null {
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

/** `/v1/ip/:ip` -> `/v1/ip/{ip}`. */
function labelOf(path: string): string {
  return path.replace(/:([^/]+)/g, '{$1}');
}

function segmentsOf(path: string): Segment[] {
  if (path === '/') return [{ kind: STATIC, text: '' }];
  return path
    .slice(1)
    .split('/')
    .map((s): Segment => (s === '*' ? { kind: WILDCARD, text: '' } : s.startsWith(':') ? { kind: PARAM, text: '' } : { kind: STATIC, text: s }));
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

/** An app as the table reads it: Elysia's list of its routes. */
interface RoutedApp {
  readonly routes: ReadonlyArray<{ method: string; path: string }>;
}

const tables = new WeakMap<RoutedApp, RouteTable>();

/**
 * The route table of an app (its own routes, less the files that are not
 * addresses): one per app, read by the request wrapper (metrics labels,
 * 404/405, the lookup pipeline's route) and the app's error hook. Built on
 * first use, when every route is registered.
 */
export function routeTableOf(app: RoutedApp): RouteTable {
  let table = tables.get(app);
  if (table === undefined) tables.set(app, (table = new RouteTable(app.routes, NOT_ADDRESSES)));
  return table;
}
