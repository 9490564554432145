/**
 * `asn-csv`: ip-location-db ASN CSV `start,end,asn,org` (addresses as text,
 * or integers in the `-num` variants; org quoted when it holds commas).
 */
import type { FeedParser } from '../feed/source.ts';
import { splitCsvLine } from '../feed/csv-fields.ts';
import { numericFamilyHint, parseRangeFields } from '../feed/range-fields.ts';

/** Parses an AS number written as digits (no "AS" prefix); -1 when invalid. */
export function parseAsnDigits(text: string): number {
  if (text.length === 0 || text.length > 10) return -1;
  let v = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
    v = v * 10 + (c - 48);
  }
  return v > 0xffffffff ? -1 : v;
}

/** Reports each routed range with its ASN and organisation. */
export const parse: FeedParser = async (ctx, sink) => {
  const hint = numericFamilyHint(ctx.path, ctx.options.family);
  let badStreak = 0;
  for await (const [line, n] of ctx.lines()) {
    if (line === '' || line.charCodeAt(0) === 35) continue; // blank or # comment
    const f = splitCsvLine(line);
    if (n === 1 && f && /^[a-z_ ]+$/i.test(f[0])) continue; // a header row such as start,end,asn,org
    if (!f || f.length < 3) {
      ctx.skip(n, 'expected start,end,asn,org');
    } else {
      const range = parseRangeFields(f[0], f[1], hint);
      const asn = parseAsnDigits(f[2]);
      if (typeof range === 'string') ctx.skip(n, range);
      else if (asn < 0) ctx.skip(n, `bad ASN "${f[2]}"`);
      else {
        const org = f.length > 3 && f[3] !== '' ? f[3] : undefined;
        sink.asn(range.family, range.start, range.end, asn, org);
        ctx.rows++;
        badStreak = 0;
        continue;
      }
    }
    // A header row or a different file altogether: nothing before it parsed.
    if (ctx.rows === 0 && ++badStreak >= 10) ctx.fail('not an ASN CSV (start,end,asn,org): no line parses', n);
  }
  if (ctx.rows === 0) ctx.fail('no ASN ranges found');
};
