/**
 * `asn-list`: ASNs whose announced ranges get the manifest `category`, as
 * - one `AS<n>` (or bare `<n>`) a line, `#` comments whole-line or inline —
 *   an inline comment (`AS3223 # VOXILITY, RO`) becomes the label;
 * - or `ASN,Entity` CSV (header optional; quoted fields, a space before the
 *   quote tolerated) — the entity becomes the label.
 * A line is CSV when a comma comes before any `#` (comments may hold commas).
 * Each ASN is reported once per file (the first line wins).
 */
import type { FeedParser } from '../feed/source.ts';
import { categoryOption, failIfEmpty, quoted } from './cidr-list.ts';
import { splitCsvLine } from '../feed/csv-fields.ts';

/** Largest 32-bit ASN. */
const MAX_ASN = 4294967295;

/** `AS13335`, `as13335` or `13335` → 13335; null when not a valid ASN (0 is reserved). */
export function parseAsn(text: string): number | null {
  const m = text.trim().match(/^(?:AS)?(\d{1,10})$/i);
  if (!m) return null;
  const n = Number(m[1]);
  return n > 0 && n <= MAX_ASN ? n : null;
}

/** One parsed data line: an ASN token and its label. */
interface AsnLine {
  token: string;
  label?: string;
}

/** Splits a data line in either layout; null when it is a CSV header row. */
function splitLine(line: string): AsnLine | null | 'bad-quote' {
  const hash = line.indexOf('#');
  const beforeComment = hash < 0 ? line : line.slice(0, hash);
  if (beforeComment.includes(',')) {
    const fields = splitCsvLine(line);
    if (!fields) return 'bad-quote';
    const token = fields[0].trim();
    if (/^asn$/i.test(token)) return null; // header
    const label = fields.slice(1).join(',').trim();
    return { token, label: label === '' ? undefined : label };
  }
  const token = beforeComment.trim();
  const label = hash < 0 ? undefined : line.slice(hash + 1).trim() || undefined;
  return { token, label };
}

/** Parses an `asn-list` source. */
export const parse: FeedParser = async (ctx, sink) => {
  const category = categoryOption(ctx);
  const seen = new Set<number>();
  for await (const [raw, lineNo] of ctx.lines()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const parts = splitLine(line);
    if (parts === null) continue;
    if (parts === 'bad-quote') {
      ctx.skip(lineNo, 'unterminated quote');
      continue;
    }
    const asn = parseAsn(parts.token);
    if (asn === null) {
      ctx.skip(lineNo, `not an ASN: ${quoted(parts.token)}`);
      continue;
    }
    if (seen.has(asn)) continue;
    seen.add(asn);
    sink.asnCategory(asn, category, parts.label);
    ctx.rows++;
  }
  failIfEmpty(ctx, 'ASNs');
};
