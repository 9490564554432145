/**
 * Plain-text vs JSON for the legacy routes (spec 4.6): `format=text` wins;
 * otherwise text only when the Accept header gives text/plain a higher
 * quality than JSON, or equal quality through a more specific match.
 * A bare any-type range (curl's default) means JSON.
 */
import { queryValues } from './request-params.ts';

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

/** `format` and `detail` of a legacy request: the query's parameters that choose its representation and layout. */
export interface LegacyQuery {
  format?: string;
  detail?: string;
}

/** The LegacyQuery of a URL without a query. */
export const NO_QUERY: LegacyQuery = Object.freeze({});

const LEGACY_KEYS = ['format', 'detail'];

/** `format` and `detail` of a URL's query; the last of a repeated key counts. */
export function legacyQuery(url: string): LegacyQuery {
  if (!url.includes('?')) return NO_QUERY;
  const [format, detail] = queryValues(url, LEGACY_KEYS);
  return { format: format?.at(-1), detail: detail?.at(-1) };
}

/** Whether a request to a legacy route asks for text (its `format` query, else its Accept header): its answer's and its errors' representation. */
export function requestWantsText(request: Request): boolean {
  return wantsText(legacyQuery(request.url).format, request.headers.get('accept'));
}
