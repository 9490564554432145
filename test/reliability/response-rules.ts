/**
 * What every answer of the service must look like, whatever it was sent:
 * never a 5xx; a JSON error is {error: string, code: string, details: object};
 * a text-route error is the one line "error: <message>\n".
 */

export interface Seen {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: string;
}

/** Routes that may answer an HTML page on error (browser-facing sign-in and dashboard). */
const HTML_ERROR_PATHS = /^\/(auth\/callback|dashboard)(\/|\?|$)/;

/** The problem with an answer, or null when it follows the rules. */
export function ruleBreak(a: Seen): string | null {
  if (a.status >= 500) return `${a.status} is a server error: ${a.body.slice(0, 200)}`;
  if (a.status < 400 || a.method === 'HEAD') return null;
  const ct = a.contentType.toLowerCase();
  if (ct.startsWith('application/json')) {
    let o: unknown;
    try {
      o = JSON.parse(a.body);
    } catch {
      return `JSON error body does not parse: ${a.body.slice(0, 120)}`;
    }
    const e = o as { error?: unknown; code?: unknown; details?: unknown };
    if (typeof o !== 'object' || o === null || Array.isArray(o)) return 'JSON error is not an object';
    if (typeof e.error !== 'string' || e.error.length === 0) return 'error is not a non-empty string';
    if (typeof e.code !== 'string' || !/^[A-Z_]+$/.test(e.code)) return `code ${JSON.stringify(e.code)} is not an upper-case code`;
    if (typeof e.details !== 'object' || e.details === null || Array.isArray(e.details)) return 'details is not an object';
    return null;
  }
  if (ct.startsWith('text/plain')) return /^error: [^\n]*\n$/.test(a.body) ? null : `text error is not one line "error: ...": ${JSON.stringify(a.body.slice(0, 120))}`;
  if (ct.startsWith('text/html') && HTML_ERROR_PATHS.test(a.path)) return null;
  return `${a.status} with content-type "${a.contentType}"`;
}

/**
 * Control characters Bun's HTTP parser refuses in a header value (probed on
 * Bun 1.4: 0x00-0x08, 0x0B, 0x0C, 0x0E-0x1F). Such a request is not HTTP;
 * the parser answers a bare 400 before any application code runs.
 */
export const PARSER_REFUSED_HEADER_CHAR = /[\x00-\x08\x0b\x0c\x0e-\x1f]/;

/** True for the parser's own refusal: 400, no content type, empty body. */
const isParserRefusal = (s: Seen) => s.status === 400 && s.contentType === '' && s.body === '';

/** Performs a request and checks the answer; throws (for fast-check) with the request on a rule break. */
export async function expectWellFormed(base: string, path: string, init: RequestInit = {}): Promise<Seen> {
  const method = init.method ?? 'GET';
  const res = await fetch(base + path, { ...init, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
  const seen: Seen = { method, path, status: res.status, contentType: res.headers.get('content-type') ?? '', body: await res.text() };
  const headerValues = Object.values((init.headers ?? {}) as Record<string, string>);
  if (headerValues.some((v) => PARSER_REFUSED_HEADER_CHAR.test(v)) && isParserRefusal(seen)) return seen;
  const problem = ruleBreak(seen);
  if (problem) throw new Error(`${method} ${path} ${JSON.stringify(init.headers ?? {})} body=${JSON.stringify(String(init.body ?? '').slice(0, 200))}: ${problem}`);
  return seen;
}
