/**
 * `peeringdb-net`: PeeringDB's public `net` objects (https://www.peeringdb.com/api/net),
 * `{"data":[{"asn":13335,"name":"Cloudflare","info_type":"Content",...}],"meta":{}}`.
 * Newer dumps also carry `info_types` (an array, several types allowed);
 * it is read first and `info_type` is the fallback. "" and "Not Disclosed"
 * name no type. Bad entries are skipped with the line they start on.
 */
import type { FeedParser } from '../feed/source.ts';
import type { NetworkType } from '../../src/index/record.ts';
import { parseAsn } from './asn-list.ts';
import { failIfEmpty, quoted } from './cidr-list.ts';
import { isObject } from './provider-formats/json-shape.ts';

/**
 * PeeringDB's info_type values and the record's network type, in the order
 * that picks one of several declared types: end-user networks before
 * infrastructure, so an access ISP that also sells transit keeps its
 * subscribers' type.
 */
export const PEERINGDB_INFO_TYPES: ReadonlyMap<string, NetworkType> = new Map([
  ['cable/dsl/isp', 'cable_dsl_isp'],
  ['educational/research', 'educational_research'],
  ['government', 'government'],
  ['enterprise', 'enterprise'],
  ['non-profit', 'non_profit'],
  ['content', 'content'],
  ['nsp', 'nsp'],
  ['network services', 'network_services'],
  ['route server', 'route_server'],
  ['route collector', 'route_collector'],
]);
const PRECEDENCE = [...PEERINGDB_INFO_TYPES.values()];

/** info_type texts that declare nothing. */
const UNDISCLOSED = new Set(['', 'not disclosed']);

/** The network type of one entry; null when it declares none, a string naming the bad value otherwise. */
function networkTypeOf(entry: Record<string, unknown>): { type: NetworkType | null } | { bad: string } {
  const list = Array.isArray(entry.info_types) && entry.info_types.length > 0 ? entry.info_types : [entry.info_type ?? ''];
  let best: NetworkType | null = null;
  for (const v of list) {
    if (typeof v !== 'string') return { bad: `info_type ${quoted(JSON.stringify(v) ?? 'missing')} is not text` };
    const key = v.trim().toLowerCase();
    if (UNDISCLOSED.has(key)) continue;
    const type = PEERINGDB_INFO_TYPES.get(key);
    if (type === undefined) return { bad: `unknown info_type ${quoted(v)}` };
    if (best === null || PRECEDENCE.indexOf(type) < PRECEDENCE.indexOf(best)) best = type;
  }
  return { type: best };
}

/**
 * The 1-based line each element of the top-level `data` array starts on
 * (the document is parsed whole; this scan only finds where entries begin).
 */
export function dataEntryLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let lastKey = '';
  let keyStart = -1;
  let inData = false;
  let expectEntry = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 10) line++;
    if (inString) {
      if (ch === 92) i++; // backslash: skip the escaped character (never a newline in valid JSON)
      else if (ch === 34) {
        inString = false;
        if (depth === 1 && keyStart >= 0) lastKey = text.slice(keyStart, i);
      }
      continue;
    }
    if (ch === 32 || ch === 9 || ch === 10 || ch === 13) continue;
    if (inData && depth === 2 && expectEntry && ch !== 93) {
      lines.push(line);
      expectEntry = false;
    }
    if (ch === 34) {
      inString = true;
      keyStart = depth === 1 ? i + 1 : -1;
    } else if (ch === 123 || ch === 91) {
      depth++;
      if (depth === 2 && ch === 91 && lastKey === 'data') inData = expectEntry = true;
    } else if (ch === 125 || ch === 93) {
      depth--;
      if (depth === 1) inData = false;
    } else if (ch === 44 && inData && depth === 2) expectEntry = true;
  }
  return lines;
}

/** Parses a `peeringdb-net` source. */
export const parse: FeedParser = async (ctx, sink) => {
  const text = ctx.readText();
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    ctx.fail(`invalid JSON: ${(e as Error).message}`);
  }
  const entries: unknown[] = isObject(doc) && Array.isArray(doc.data) ? doc.data : ctx.fail('expected a PeeringDB net dump: {"data": [...]}');
  const lineOf = dataEntryLines(text);
  const seen = new Set<number>();
  entries.forEach((entry, i) => {
    const lineNo = lineOf[i] ?? 0;
    if (!isObject(entry)) return ctx.skip(lineNo, 'entry is not an object');
    const asn = typeof entry.asn === 'number' || typeof entry.asn === 'string' ? parseAsn(String(entry.asn)) : null;
    if (asn === null) return ctx.skip(lineNo, `not an ASN: ${quoted(JSON.stringify(entry.asn) ?? 'missing')}`);
    const declared = networkTypeOf(entry);
    if ('bad' in declared) return ctx.skip(lineNo, `AS${asn}: ${declared.bad}`);
    ctx.rows++;
    if (seen.has(asn)) return;
    seen.add(asn);
    if (declared.type !== null) sink.asnNetworkType(asn, declared.type);
  });
  failIfEmpty(ctx, 'networks');
};
