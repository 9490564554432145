/**
 * The app's routes as one table, read from the Elysia app itself: which
 * route pattern a path belongs to (the metrics label, the rate-limit view)
 * and which methods that pattern answers (405 with `Allow`). Matching
 * follows Elysia's router so both always name the same route (tested
 * against the router in test/http/route-table.test.ts): a static segment
 * beats a parameter, a parameter beats a wildcard, a parameter is never
 * empty, and one trailing slash is ignored. Matching walks the path in
 * place: no allocation per request.
 */

/** The label of every path that is no route: one label for all of them keeps metrics bounded. */
export const OTHER_ROUTE = 'other';

/** Methods every route answers besides its own: HEAD wherever GET is, OPTIONS (CORS preflight) everywhere. */
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
}

/** A pattern segment: static text, a parameter, or a wildcard (the rest of the path). */
type Segment = { kind: 0; text: string } | { kind: 1 } | { kind: 2 };
const STATIC = 0;
const PARAM = 1;
const WILDCARD = 2;

interface Pattern {
  entry: RouteEntry;
  segments: Segment[];
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
  private readonly notRoutes: ReadonlySet<string>;
  /** Every distinct label (the metrics route label set, with OTHER_ROUTE). */
  readonly labels: readonly string[];

  /**
   * `routes` as Elysia lists them (`app.routes`); OPTIONS routes are the CORS
   * plugin's catch-alls and not resources. `notRoutes`: exact paths that no
   * pattern answers although one would match them.
   */
  constructor(routes: ReadonlyArray<{ method: string; path: string }>, notRoutes: readonly string[] = []) {
    this.notRoutes = new Set(notRoutes);
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
      const entry: RouteEntry = { label: labelOf(path), anyMethod, methods, allow: anyMethod ? '' : [...new Set(allowed)].join(', ') };
      patterns.push({ entry, segments: segmentsOf(path) });
    }
    patterns.sort((a, b) => compareSpecificity(a.segments, b.segments));
    for (const p of patterns) {
      if (p.segments.at(-1)?.kind === WILDCARD) this.wildcards.push(p);
      else (this.bySegments[p.segments.length] ??= []).push(p);
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

  /** The route a path (as `pathOf` gives it: starts with "/", no query) belongs to; null when none. */
  match(path: string): RouteEntry | null {
    // One trailing slash is ignored ("/health/" is "/health"), as the router does; "//" is not "/".
    const end = path.length > 2 && path.charCodeAt(path.length - 1) === 47 ? path.length - 1 : path.length;
    let count = 0;
    for (let i = 0; i < end; i++) if (path.charCodeAt(i) === 47) count++;
    const candidates = this.bySegments[count];
    if (candidates !== undefined) {
      for (let i = 0; i < candidates.length; i++) {
        if (matches(candidates[i].segments, path, end)) return this.unlessNotRoute(candidates[i].entry, path);
      }
    }
    for (let i = 0; i < this.wildcards.length; i++) {
      if (matches(this.wildcards[i].segments, path, end)) return this.unlessNotRoute(this.wildcards[i].entry, path);
    }
    return null;
  }

  private unlessNotRoute(entry: RouteEntry, path: string): RouteEntry | null {
    return this.notRoutes.size !== 0 && this.notRoutes.has(path) ? null : entry;
  }
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
    .map((s): Segment => (s === '*' ? { kind: WILDCARD } : s.startsWith(':') ? { kind: PARAM } : { kind: STATIC, text: s }));
}

/** Router precedence: at the first segment where two patterns differ in kind, static < parameter < wildcard. */
function compareSpecificity(a: Segment[], b: Segment[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i].kind !== b[i].kind) return a[i].kind - b[i].kind;
  }
  return b.length - a.length;
}

/** Whether `path[0..end)` matches the segments, walking it in place. */
function matches(segments: Segment[], path: string, end: number): boolean {
  let pos = 1; // after the leading "/"
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i];
    if (seg.kind === WILDCARD) return pos <= end;
    if (pos > end) return false;
    let next = path.indexOf('/', pos);
    if (next < 0 || next > end) next = end;
    if (seg.kind === STATIC) {
      if (next - pos !== seg.text.length || !path.startsWith(seg.text, pos)) return false;
    } else if (next === pos) return false; // an empty parameter
    pos = next + 1;
  }
  return pos === end + 1;
}
