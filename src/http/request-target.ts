/**
 * The path of a request, read once from `request.url`, or null when the
 * request cannot be given one path that every part of the server agrees on.
 *
 * Bun builds `request.url` from the Host header and the target. With a
 * Host it can parse, the URL is absolute and normalised (`http://host/path`).
 * With a Host it cannot parse (`a/`, `x?`, `x#`, `x\`, non-ASCII) or none,
 * `request.url` is the bare target (`/auth/x/v1/ip/current`): Elysia, which
 * skips the first 7 characters to find the path, then routed
 * `/v1/ip/current` while the limiter saw `/auth/...`. With a Host whose port
 * or address is malformed (`a:99999`, `256.1.1.1`) the URL is absolute but
 * not normalised, and `new URL(request.url)` in a route threw. A target with
 * a fragment (`/1.1.1.1#/x`) is cut at `#` by the URL parser but not by
 * Elysia. All of these are refused (400): the path is only trusted when the
 * URL is `http://<origin>/...` with an origin the URL parser accepts as
 * written, and no `#`. Then Elysia's path (from the first "/" after
 * "http://" to "?") is exactly this path, and `new URL(request.url)` cannot
 * fail (a path never makes the parser fail: it percent-encodes instead).
 */

/** Recently accepted origins (`http://host:port/`); a few slots so clients using two names stay cheap. */
const ORIGIN_SLOTS = 4;

/**
 * Reads request paths; holds the last few origins it accepted so a known
 * origin costs no URL parse. `pathStart` and `pathEnd` bound the path inside
 * the URL, so it can be matched in place (route-table.ts) before it is sliced.
 */
export class RequestTargets {
  private readonly origins: string[] = [];
  private next = 0;

  /** The path of `url` (request.url), or null when the target or Host cannot be parsed consistently. */
  pathOf(url: string): string | null {
    const start = this.pathStart(url);
    return start < 0 ? null : url.slice(start, pathEnd(url, start));
  }

  /** Where the path of `url` starts, or -1 when the target or Host cannot be parsed consistently. */
  pathStart(url: string): number {
    // Only an accepted origin (always "http://...") can precede the path, so a bare target never passes.
    const start = url.indexOf('/', 7);
    if (start < 0 || url.indexOf('#', start) >= 0) return -1;
    return this.knownOrigin(url, start) || this.acceptOrigin(url, start) ? start : -1;
  }

  private knownOrigin(url: string, start: number): boolean {
    const origins = this.origins;
    for (let i = 0; i < origins.length; i++) {
      if (origins[i].length === start + 1 && url.startsWith(origins[i])) return true;
    }
    return false;
  }

  /** Parses the URL; accepts its origin when the parser writes it exactly as the URL does. */
  private acceptOrigin(url: string, start: number): boolean {
    const parsed = URL.parse(url);
    // Plain http only: Bun.serve here is not TLS, and Elysia's path search assumes "http://".
    if (parsed === null || parsed.protocol !== 'http:' || parsed.origin.length !== start || !url.startsWith(parsed.origin)) return false;
    // Whether a URL parses depends on its origin only, so this origin vouches for later targets.
    this.origins[this.next] = url.slice(0, start + 1);
    this.next = (this.next + 1) % ORIGIN_SLOTS;
    return true;
  }
}

/** Where the path that starts at `start` ends: at the query, or the end of the URL. */
export function pathEnd(url: string, start: number): number {
  const query = url.indexOf('?', start);
  return query < 0 ? url.length : query;
}
