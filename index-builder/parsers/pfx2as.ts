/**
 * `pfx2as`: CAIDA RouteViews prefix2as, `prefix<TAB>length<TAB>asn`.
 *
 * The origin column maps to RouteValue as follows:
 * - `13335`: origins [13335].
 * - MOAS `24151_24409` (prefix announced by several origins):
 *   origins [24151, 24409], asSet unset.
 * - AS-set `3356,6223` (an aggregate whose origin is one of a set):
 *   origins [3356, 6223], asSet true.
 * - Both, `209_3356,6223,6224,19901`: every ASN in order of appearance,
 *   duplicates removed, asSet true (the origin is ambiguous either way).
 */
import type { FeedParser } from '../feed/source.ts';
import type { RouteValue } from '../sink.ts';
import { parseIPv4Range, parseIPv6, prefixRange } from '../../src/net/ip.ts';
import { parseAsnDigits } from './asn-csv.ts';

/** Parses the origin column; a reason string when invalid. */
export function parseOrigins(text: string): { origins: number[]; asSet: boolean } | string {
  const origins: number[] = [];
  let asSet = false;
  for (const group of text.split('_')) {
    const members = group.split(',');
    if (members.length > 1) asSet = true;
    for (const m of members) {
      const asn = parseAsnDigits(m);
      if (asn < 0) return `bad origin AS "${m}"`;
      if (!origins.includes(asn)) origins.push(asn);
    }
  }
  return { origins, asSet };
}

/** Reports each routed prefix with its origin AS(es). */
export const parse: FeedParser = async (ctx, sink) => {
  // The file has no header; CAIDA names it by the snapshot time (`routeviews-rv2-20240406-1200.pfx2as.gz`).
  const named = /-(\d{8})-(\d{2})(\d{2})\.pfx2as/.exec(ctx.displayPath);
  if (named) ctx.reportDate(`${named[1].slice(0, 4)}-${named[1].slice(4, 6)}-${named[1].slice(6)}T${named[2]}:${named[3]}:00Z`);
  let badStreak = 0;
  for await (const [line, n] of ctx.lines()) {
    if (line === '' || line.charCodeAt(0) === 35) continue;
    const t1 = line.indexOf('\t');
    const t2 = t1 < 0 ? -1 : line.indexOf('\t', t1 + 1);
    const reason = t2 < 0 ? 'expected prefix<TAB>length<TAB>asn' : report(line, t1, t2);
    if (reason === undefined) {
      ctx.rows++;
      badStreak = 0;
      continue;
    }
    ctx.skip(n, reason);
    if (ctx.rows === 0 && ++badStreak >= 10) ctx.fail('not a RouteViews prefix2as file: no line parses', n);
  }
  if (ctx.rows === 0) ctx.fail('no routed prefixes found');

  /** Parses and reports one line; the reason when it is malformed. */
  function report(line: string, t1: number, t2: number): string | undefined {
    const lenText = line.slice(t1 + 1, t2);
    const len = parseAsnDigits(lenText);
    const parsed = parseOrigins(line.slice(t2 + 1).trimEnd());
    if (typeof parsed === 'string') return parsed;
    const value: RouteValue = parsed.asSet
      ? { prefixLen: len, origins: parsed.origins, asSet: true }
      : { prefixLen: len, origins: parsed.origins };
    if (line.lastIndexOf(':', t1) >= 0) {
      const base = parseIPv6(line.slice(0, t1));
      if (base === null) return `bad IPv6 prefix "${line.slice(0, t1)}"`;
      if (len < 0 || len > 128) return `bad prefix length "${lenText}"`;
      const { start, end } = prefixRange(6, base, len);
      sink.route(6, start, end, value);
      return undefined;
    }
    const base = parseIPv4Range(line, 0, t1);
    if (base < 0) return `bad IPv4 prefix "${line.slice(0, t1)}"`;
    if (len < 0 || len > 32) return `bad prefix length "${lenText}"`;
    const size = 2 ** (32 - len);
    const start = base - (base % size);
    sink.route(4, start, start + size - 1, value);
    return undefined;
  }
};
