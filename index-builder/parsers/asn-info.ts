/**
 * `asn-info`: ASN → name tables. The layout is detected from the first line:
 * - `"asn","name","source"` CSV (asn2org): name as given;
 * - `asn,handle,description` CSV (ipverse): the description, else the handle;
 * - `ASN<TAB>NAME, CC` text (potaroo via inet-resources): NAME without ", CC";
 * - a JSON object `{"<asn>": "<NAME - descr, CC>"}` (pyasn): value without ", CC".
 * Potaroo's placeholders (`-Reserved AS-`, `-Private Use AS-`) are not names
 * and are passed over.
 */
import type { FeedParser, SourceContext } from '../feed/source.ts';
import type { BuildSink } from '../sink.ts';
import { splitCsvLine } from '../feed/csv-fields.ts';
import { parseAsnDigits } from './asn-csv.ts';

type Layout = 'asn2org' | 'ipverse' | 'potaroo';

const PLACEHOLDER = /^-(Reserved|Private Use) AS-$/;

/** A name without the trailing `, CC` country suffix. */
export function stripCountrySuffix(text: string): string {
  const t = text.trim();
  const n = t.length;
  if (n > 4 && t.charCodeAt(n - 4) === 44 && t.charCodeAt(n - 3) === 32 && /^[A-Z]{2}$/.test(t.slice(n - 2))) {
    return t.slice(0, n - 4).trim();
  }
  return t;
}

/** The layout named by a first line, or null when it is none of them. */
export function detectLayout(firstLine: string): Layout | null {
  const header = splitCsvLine(firstLine)?.map((f) => f.trim().toLowerCase());
  if (header && header[0] === 'asn' && header[1] === 'name') return 'asn2org';
  if (header && header[0] === 'asn' && header[1] === 'handle') return 'ipverse';
  const tab = firstLine.indexOf('\t');
  if (tab > 0 && parseAsnDigits(firstLine.slice(0, tab)) >= 0) return 'potaroo';
  return null;
}

/** The ASN and name of one data line in a layout; a reason string when invalid. */
export function parseNameLine(layout: Layout, line: string): { asn: number; name: string } | string {
  let asnText: string;
  let name: string;
  if (layout === 'potaroo') {
    const tab = line.indexOf('\t');
    if (tab < 0) return 'expected ASN<TAB>NAME, CC';
    asnText = line.slice(0, tab);
    name = stripCountrySuffix(line.slice(tab + 1));
  } else {
    const f = splitCsvLine(line);
    if (!f || f.length < (layout === 'asn2org' ? 2 : 3)) return `expected ${layout === 'asn2org' ? 'asn,name,source' : 'asn,handle,description'}`;
    asnText = f[0].trim();
    name = layout === 'asn2org' ? f[1].trim() : f[2].trim() || f[1].trim();
  }
  const asn = parseAsnDigits(asnText);
  if (asn < 0) return `bad ASN "${asnText}"`;
  return { asn, name };
}

/** The pyasn JSON map. */
function parseJsonMap(ctx: SourceContext, sink: BuildSink): void {
  const doc = ctx.readJson<unknown>();
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) ctx.fail('expected a JSON object of ASN → name');
  let i = 0;
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    i++;
    const asn = parseAsnDigits(key);
    if (asn < 0 || typeof value !== 'string') {
      ctx.skip(i, `entry ${i}: bad ASN "${key}" or name`);
      continue;
    }
    const name = stripCountrySuffix(value);
    if (name === '' || PLACEHOLDER.test(name)) continue;
    sink.asnName(asn, name);
    ctx.rows++;
  }
}

/** Reports every ASN's name. */
export const parse: FeedParser = async (ctx, sink) => {
  let layout: Layout | null = null;
  for await (const [line, n] of ctx.lines()) {
    if (line.trim() === '') continue;
    if (layout === null) {
      if (line.trimStart().startsWith('{')) {
        parseJsonMap(ctx, sink);
        return;
      }
      layout = detectLayout(line);
      if (layout === null) ctx.fail('unknown ASN table layout (expected asn2org, ipverse or potaroo text)', n);
      if (layout !== 'potaroo') continue; // the CSV header line
    }
    const r = parseNameLine(layout, line);
    if (typeof r === 'string') {
      ctx.skip(n, r);
      continue;
    }
    if (r.name === '' || PLACEHOLDER.test(r.name)) continue;
    sink.asnName(r.asn, r.name);
    ctx.rows++;
  }
  if (layout === null) ctx.fail('empty file');
};
