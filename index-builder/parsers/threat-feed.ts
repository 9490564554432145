/**
 * `threat-feed`: abuse.ch Feodo Tracker botnet C2 blocklist, as
 * - `ipblocklist.csv`: a `#` comment block, a quoted header row
 *   (`"first_seen_utc","dst_ip","dst_port","c2_status","last_online","malware"`),
 *   quoted rows, a closing `# END n entries` line; columns are found by name;
 * - `ipblocklist.json`: an array of `{ip_address, port, status, hostname,
 *   as_number, as_name, country, first_seen, last_online, malware}`.
 * Each address is one sidecar entry (the first row for an address wins).
 * Dates become ISO 8601 UTC: `2023-05-23 17:51:44` → `2023-05-23T17:51:44Z`;
 * date-only values stay dates (`2024-04-01`) rather than invent a time.
 */
import { splitCsvLine } from '../feed/csv-fields.ts';
import type { FeedParser, SourceContext } from '../feed/source.ts';
import type { BuildSink, ThreatFeedValue } from '../sink.ts';
import { parseIp } from '../../src/net/ip.ts';
import { failIfEmpty, quoted } from './cidr-list.ts';
import { isObject, textOf } from './provider-formats/json-shape.ts';

/** A feed timestamp as ISO 8601 UTC (`YYYY-MM-DD[ hh:mm:ss]` read as UTC); undefined when not a date. */
export function isoUtc(value: string | undefined): string | undefined {
  const m = value?.trim().match(/^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}:\d{2})(?:\.\d+)?Z?)?$/);
  if (!m) return undefined;
  if (Number.isNaN(Date.parse(`${m[1]}T${m[2] ?? '00:00:00'}Z`))) return undefined;
  return m[2] ? `${m[1]}T${m[2]}Z` : m[1];
}

/** A TCP/UDP port number, or undefined. */
function portOf(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,5}$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 0 && n <= 65535 ? n : undefined;
}

/** The value without undefined fields. */
function compact(value: ThreatFeedValue): ThreatFeedValue {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as ThreatFeedValue;
}

/** Reports one address once per file; false when the address text is invalid. */
function report(sink: BuildSink, ctx: SourceContext, seen: Set<string>, ipText: string, value: ThreatFeedValue): boolean {
  const ip = parseIp(ipText.trim());
  if (!ip) return false;
  const key = `${ip.family}:${ip.value}`;
  if (seen.has(key)) return true;
  seen.add(key);
  sink.threatFeed(ip.family, ip.value, ip.value, compact(value));
  ctx.rows++;
  return true;
}

/** Column names of the Feodo CSV this parser needs (`dst_ip` is required). */
const CSV_COLUMNS = ['first_seen_utc', 'dst_ip', 'dst_port', 'c2_status', 'last_online', 'malware'] as const;

/** Reads the CSV form. */
async function parseCsv(ctx: SourceContext, sink: BuildSink): Promise<void> {
  const seen = new Set<string>();
  let columns: Map<string, number> | undefined;
  for await (const [raw, lineNo] of ctx.lines()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) {
      const updated = /^#\s*Last updated:\s*(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})/i.exec(line);
      if (updated) ctx.reportDate(updated[1]);
      continue;
    }
    const fields = splitCsvLine(line);
    if (!columns) {
      const names = (fields ?? []).map((f) => f.trim().toLowerCase());
      if (!names.includes('dst_ip')) ctx.fail(`expected the header row (${CSV_COLUMNS.join(',')}), got ${quoted(line)}`, lineNo);
      columns = new Map(names.map((n, i) => [n, i]));
      continue;
    }
    if (!fields) {
      ctx.skip(lineNo, 'unterminated quote');
      continue;
    }
    const col = (name: (typeof CSV_COLUMNS)[number]) => {
      const at = columns!.get(name);
      return at === undefined ? undefined : textOf(fields[at]);
    };
    const ok = report(sink, ctx, seen, col('dst_ip') ?? '', {
      malware: col('malware'),
      firstSeen: isoUtc(col('first_seen_utc')),
      lastSeen: isoUtc(col('last_online')),
      port: portOf(col('dst_port')),
      status: col('c2_status'),
    });
    if (!ok) ctx.skip(lineNo, `not an IP address: ${quoted(col('dst_ip') ?? '')}`);
  }
}

/** Reads the JSON form (array of objects). */
function parseJson(ctx: SourceContext, sink: BuildSink): void {
  const doc = ctx.readJson();
  if (!Array.isArray(doc)) return ctx.fail('expected a JSON array of blocklist entries');
  const seen = new Set<string>();
  doc.forEach((item: unknown, i: number) => {
    const rec = isObject(item) ? item : {};
    const ipText = textOf(rec.ip_address);
    const ok =
      ipText !== undefined &&
      report(sink, ctx, seen, ipText, {
        malware: textOf(rec.malware),
        firstSeen: isoUtc(textOf(rec.first_seen)),
        lastSeen: isoUtc(textOf(rec.last_online)),
        port: portOf(rec.port),
        status: textOf(rec.status),
      });
    if (!ok) ctx.skip(0, `[${i}].ip_address: not an IP address: ${quoted(String(rec.ip_address))}`);
  });
}

/** Parses a `threat-feed` source (CSV or JSON, told apart by the first character). */
export const parse: FeedParser = async (ctx, sink) => {
  if ((await ctx.firstDataChar()) === '[') parseJson(ctx, sink);
  else await parseCsv(ctx, sink);
  failIfEmpty(ctx, 'blocklist entries');
};
