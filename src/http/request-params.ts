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

/**
 * Every value of each named query parameter of a URL, in order, as
 * URLSearchParams.getAll gives them (undefined when the name is absent). A
 * query with nothing encoded is read in place, without a URL parse; one
 * with `%` or `+` is read by URLSearchParams.
 */
export function queryValues(url: string, names: readonly string[]): Array<string[] | undefined> {
  const out: Array<string[] | undefined> = names.map(() => undefined);
  const q = url.indexOf('?');
  if (q < 0) return out;
  if (url.includes('%', q) || url.includes('+', q)) {
    const params = new URLSearchParams(url.slice(q + 1));
    for (let n = 0; n < names.length; n++) if (params.has(names[n])) out[n] = params.getAll(names[n]);
    return out;
  }
  // Pairs read in place: [at, end) is one `key[=value]`; empty pairs are skipped, as URLSearchParams does.
  for (let at = q + 1; at <= url.length; ) {
    let end = url.indexOf('&', at);
    if (end < 0) end = url.length;
    if (end > at) {
      const eq = url.indexOf('=', at);
      const keyEnd = eq < 0 || eq > end ? end : eq;
      for (let n = 0; n < names.length; n++) {
        const name = names[n];
        if (keyEnd - at === name.length && url.startsWith(name, at)) (out[n] ??= []).push(keyEnd === end ? '' : url.slice(keyEnd + 1, end));
      }
    }
    at = end + 1;
  }
  return out;
}
