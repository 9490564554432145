/**
 * `rpki-vrps`: validated ROA payloads, as rpki-client/gortr JSON
 * (`{"roas":[{"asn":..,"prefix":..,"maxLength":..}]}`) or CSV with a header
 * naming `ASN`, `IP Prefix` and `Max Length` (an optional leading `URI` and
 * trailing `Not Before,Not After`/`Trust Anchor` columns are ignored).
 */
import type { FeedParser, SourceContext } from '../feed/source.ts';
import type { BuildSink, VrpValue } from '../sink.ts';
import { parseCidr } from '../../src/net/ip.ts';
import { splitCsvLine } from '../feed/csv-fields.ts';
import { parseAsnDigits } from './asn-csv.ts';

/** An ASN as `64500`, `"64500"` or `"AS64500"`; -1 when invalid. */
export function parseAsnValue(v: unknown): number {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 && v <= 0xffffffff ? v : -1;
  if (typeof v !== 'string') return -1;
  const t = v.trim();
  return parseAsnDigits(t.length > 2 && (t[0] === 'A' || t[0] === 'a') && (t[1] === 'S' || t[1] === 's') ? t.slice(2) : t);
}

/** Builds a VRP from its three parts; a reason string when invalid. */
export function makeVrp(asnValue: unknown, prefixText: unknown, maxLengthValue: unknown): VrpValue | string {
  const asn = parseAsnValue(asnValue);
  if (asn < 0) return `bad ASN "${String(asnValue)}"`;
  const cidr = typeof prefixText === 'string' ? parseCidr(prefixText.trim()) : null;
  if (!cidr) return `bad prefix "${String(prefixText)}"`;
  let maxLength = cidr.len; // RFC 6482: an absent maxLength equals the prefix length
  if (maxLengthValue !== undefined && maxLengthValue !== null && maxLengthValue !== '') {
    const m = typeof maxLengthValue === 'string' ? parseAsnDigits(maxLengthValue.trim()) : maxLengthValue;
    if (typeof m !== 'number' || !Number.isInteger(m)) return `bad max length "${String(maxLengthValue)}"`;
    maxLength = m;
  }
  const familyMax = cidr.family === 4 ? 32 : 128;
  if (maxLength < cidr.len || maxLength > familyMax) return `max length ${maxLength} outside ${cidr.len}..${familyMax}`;
  return { family: cidr.family, asn, start: cidr.start, end: cidr.end, prefixLen: cidr.len, maxLength };
}

/** The JSON export: every entry of `roas` (skips name the entry index, 1-based). */
function parseJson(ctx: SourceContext, sink: BuildSink): void {
  const doc = ctx.readJson<{ roas?: unknown }>();
  if (doc === null || typeof doc !== 'object' || !Array.isArray(doc.roas)) ctx.fail('JSON without a "roas" array');
  doc.roas.forEach((roa: unknown, i: number) => {
    const r = (roa ?? {}) as { asn?: unknown; prefix?: unknown; maxLength?: unknown };
    const vrp = makeVrp(r.asn, r.prefix, r.maxLength);
    if (typeof vrp === 'string') ctx.skip(i + 1, `roas[${i}]: ${vrp}`);
    else {
      sink.vrp(vrp);
      ctx.rows++;
    }
  });
}

/** Column positions from a CSV header line, or null when it is not one. */
function csvColumns(fields: string[]): { asn: number; prefix: number; maxLength: number } | null {
  const names = fields.map((f) => f.trim().toLowerCase());
  const asn = names.indexOf('asn');
  const prefix = names.indexOf('ip prefix');
  const maxLength = names.indexOf('max length');
  return asn < 0 || prefix < 0 || maxLength < 0 ? null : { asn, prefix, maxLength };
}

/** Reports every VRP of the export. */
export const parse: FeedParser = async (ctx, sink) => {
  let cols: ReturnType<typeof csvColumns> = null;
  for await (const [line, n] of ctx.lines()) {
    if (line.trim() === '') continue;
    if (!cols) {
      if (line.trimStart().startsWith('{')) {
        parseJson(ctx, sink);
        return;
      }
      const header = splitCsvLine(line);
      cols = header ? csvColumns(header) : null;
      if (!cols) ctx.fail('expected rpki-client JSON or a CSV header with ASN,IP Prefix,Max Length', n);
      continue;
    }
    const f = splitCsvLine(line);
    if (!f || f.length <= Math.max(cols.asn, cols.prefix, cols.maxLength)) {
      ctx.skip(n, 'too few columns');
      continue;
    }
    const vrp = makeVrp(f[cols.asn], f[cols.prefix], f[cols.maxLength]);
    if (typeof vrp === 'string') ctx.skip(n, vrp);
    else {
      sink.vrp(vrp);
      ctx.rows++;
    }
  }
  if (!cols) ctx.fail('empty file');
};
