/**
 * Plain-text vs JSON for the legacy routes (spec 4.6): `format=text` wins;
 * otherwise text only when the Accept header gives text/plain a higher
 * quality than JSON, or equal quality through a more specific match.
 * A bare any-type range (curl's default) means JSON.
 */

import type { ApiError } from '../errors.ts';

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

/** Parses an Accept header into media ranges (malformed parts ignored). */
export function parseAccept(header: string | null): MediaRange[] {
  if (!header) return [];
  const out: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [range, ...params] = part.split(';').map((s) => s.trim());
    const slash = range.indexOf('/');
    if (slash <= 0 || slash === range.length - 1) continue;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=').map((s) => s.trim());
      if (k?.toLowerCase() === 'q') {
        const n = Number(v);
        q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(v ?? '') ? n : 0; // an invalid q counts as "not acceptable"
      }
    }
    out.push({ type: range.slice(0, slash).toLowerCase(), subtype: range.slice(slash + 1).toLowerCase(), q });
  }
  return out;
}

/** Quality and specificity (2 exact, 1 type wildcard, 0 full wildcard, -1 none) the ranges give a media type. */
function match(ranges: MediaRange[], type: string, subtype: string): { q: number; specificity: number } {
  let best = { q: 0, specificity: -1 };
  for (const r of ranges) {
    let specificity = -1;
    if (r.type === type && r.subtype === subtype) specificity = 2;
    else if (r.type === type && r.subtype === '*') specificity = 1;
    else if (r.type === '*' && r.subtype === '*') specificity = 0;
    // The most specific matching range decides the quality (RFC 9110 12.5.1).
    if (specificity > best.specificity) best = { q: r.q, specificity };
  }
  return best;
}

/** Whether a legacy route answers in plain text. */
export function wantsText(format: string | null | undefined, accept: string | null): boolean {
  if (format !== undefined && format !== null && format !== '') return format.toLowerCase() === 'text';
  const ranges = parseAccept(accept);
  const text = match(ranges, 'text', 'plain');
  const json = match(ranges, 'application', 'json');
  if (text.q > json.q) return true;
  return text.q > 0 && text.q === json.q && text.specificity > json.specificity;
}

/** An error as legacy text (spec 4.6 rule 6): one line `error: <message>`, the JSON route's status and headers. */
export function textErrorResponse(e: ApiError): Response {
  return new Response(`error: ${e.message}\n`, {
    status: e.status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', vary: 'Accept', ...e.headers },
  });
}

/** Whether a request to a legacy route asks for text (its `format` query, else its Accept header). */
export function requestWantsText(request: Request): boolean {
  const q = request.url.indexOf('?');
  const format = q < 0 ? null : new URLSearchParams(request.url.slice(q + 1)).get('format');
  return wantsText(format, request.headers.get('accept'));
}
