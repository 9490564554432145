/** Reading a path parameter the way every route does: decoded exactly once. */

/**
 * The last segment of a path (no query) as a `/…/{param}` route reads it:
 * one trailing slash ignored, percent-decoded once (decoding again would
 * turn `%2531` into `1`), the raw text when it does not decode (`%ZZ`),
 * which the route then refuses with its own code.
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
