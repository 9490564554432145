/**
 * `spamhaus-drop`: DROP-style "do not route" lists, as
 * - JSON lines `{"cidr":..,"sblid":..,"rir":..}` ending with a
 *   `{"type":"metadata",...}` line (drop_v4.json, drop_v6.json);
 * - or text `CIDR ; SBLnnn` with a `;` comment header (drop.txt,
 *   edrop.txt, dropv6.txt).
 * List name: `edrop` when the header says "EDROP" or the file name contains
 * "edrop"; otherwise by address family, `drop` (IPv4) or `dropv6` (IPv6).
 * `reference` is the SBL id when present.
 */
import { basename } from 'node:path';
import type { FeedParser, SourceContext } from '../feed/source.ts';
import type { ThreatListValue } from '../sink.ts';
import { parseCidr, type Family } from '../../src/net/ip.ts';
import { failIfEmpty, quoted } from './cidr-list.ts';
import { isObject, textOf } from './provider-formats/json-shape.ts';

/** One listing read from a line, or a reason it could not be read. */
type DropLine = { cidr: string; reference?: string } | { skip: string } | { metadataTimestamp: unknown };

/** Reads one JSON line. */
function jsonLine(line: string): DropLine {
  let rec: unknown;
  try {
    rec = JSON.parse(line);
  } catch {
    return { skip: 'invalid JSON line' };
  }
  if (!isObject(rec)) return { skip: 'JSON line is not an object' };
  if (rec.type === 'metadata') return { metadataTimestamp: rec.timestamp };
  const cidr = textOf(rec.cidr);
  if (cidr === undefined) return { skip: 'JSON line without "cidr"' };
  const ref = textOf(rec.sblid);
  return { cidr, reference: ref?.toUpperCase() };
}

/** Reads one `CIDR ; SBLnnn` text line. */
function textLine(line: string): DropLine {
  const semi = line.indexOf(';');
  const cidr = (semi < 0 ? line : line.slice(0, semi)).trim();
  const ref = semi < 0 ? undefined : line.slice(semi + 1).trim();
  return { cidr, reference: ref && /^SBL\d+$/i.test(ref) ? ref.toUpperCase() : undefined };
}

/** The list name for an entry of this family. */
function listName(edrop: boolean, family: Family): string {
  if (edrop) return 'edrop';
  return family === 6 ? 'dropv6' : 'drop';
}

/** True when the file name marks an EDROP list. */
function namedEdrop(ctx: SourceContext): boolean {
  return basename(ctx.displayPath).toLowerCase().includes('edrop');
}

/** Parses a `spamhaus-drop` source. */
export const parse: FeedParser = async (ctx, sink) => {
  let edrop = namedEdrop(ctx);
  for await (const [raw, lineNo] of ctx.lines()) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith(';')) {
      if (/\bEDROP\b/i.test(line)) edrop = true;
      const modified = /^;\s*Last-Modified:\s*(.+)$/i.exec(line);
      if (modified) ctx.reportDate(modified[1]);
      continue;
    }
    const read = line.startsWith('{') ? jsonLine(line) : textLine(line);
    if ('metadataTimestamp' in read) {
      if (typeof read.metadataTimestamp === 'number') ctx.reportDate(read.metadataTimestamp);
      continue;
    }
    if ('skip' in read) {
      ctx.skip(lineNo, read.skip);
      continue;
    }
    const cidr = parseCidr(read.cidr);
    if (!cidr) {
      ctx.skip(lineNo, `not a CIDR: ${quoted(read.cidr)}`);
      continue;
    }
    const value: ThreatListValue = { list: listName(edrop, cidr.family) };
    if (read.reference) value.reference = read.reference;
    sink.threatList(cidr.family, cidr.start, cidr.end, value);
    ctx.rows++;
  }
  failIfEmpty(ctx, 'listed ranges');
};
