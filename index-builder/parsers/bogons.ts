/**
 * `bogons`: Team Cymru fullbogons text — a `# last updated <unix>` comment
 * header, then one CIDR a line (IPv4 and IPv6 lists are separate files).
 */
import type { FeedParser } from '../feed/source.ts';
import { cidrLines, failIfEmpty } from './cidr-list.ts';

/** Parses a `bogons` source. */
export const parse: FeedParser = async (ctx, sink) => {
  // `# last updated 1710089701 (Sun Mar 10 16:55:01 2024 GMT)`: the date bogons yield by (merge/records.ts).
  const header = (line: string) => {
    const m = /^#\s*last updated\s+(\d{9,11})\b/i.exec(line);
    if (m) ctx.reportDate(Number(m[1]));
  };
  let asOf: string | undefined;
  for await (const cidr of cidrLines(ctx, header)) {
    asOf ??= ctx.date.at;
    sink.bogon(cidr.family, cidr.start, cidr.end, asOf);
    ctx.rows++;
  }
  failIfEmpty(ctx, 'bogon prefixes');
};
