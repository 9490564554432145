/**
 * Reading parameters out of a request the way every route does: path
 * segments decoded exactly once, repeated query keys kept.
 */

/**
 * A path parameter as Elysia already percent-decoded it (decoding again would
 * turn `%2531` into `1`). Elysia gives null for a segment that does not
 * decode (`%ZZ`); the route then sees the raw segment and refuses it itself.
 */
export function pathParam(v: string | null | undefined, request: Request): string {
  return typeof v === 'string' ? v : rawLastSegment(request.url);
}

/** The last path segment of a URL, undecoded. */
export function rawLastSegment(url: string): string {
  const path = new URL(url).pathname;
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * The last segment of a path (no query) as the router gives it to a
 * `/…/:param` route: one trailing slash ignored, percent-decoded once, the
 * raw text when it does not decode (as pathParam gives it).
 */
export function lastSegmentParam(path: string): string {
  const end = path.length > 1 && path.charCodeAt(path.length - 1) === 47 ? path.length - 1 : path.length;
  const raw = path.slice(path.lastIndexOf('/', end - 1) + 1, end);
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Every value of a query parameter, in order (Elysia's parsed query keeps only the last of a repeated key). */
export function queryAll(request: Request, name: string): string[] {
  return new URL(request.url).searchParams.getAll(name);
}
