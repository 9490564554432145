/**
 * `bogons`: Team Cymru fullbogons text — a `# last updated <unix>` comment
 * header, then one CIDR a line (IPv4 and IPv6 lists are separate files).
 */
import type { FeedParser } from '../feed/source.ts';
import { cidrLines, failIfEmpty } from './cidr-list.ts';

/** Parses a `bogons` source. */
export const parse: FeedParser = async (ctx, sink) => {
  for await (const cidr of cidrLines(ctx)) {
    sink.bogon(cidr.family, cidr.start, cidr.end);
    ctx.rows++;
  }
  failIfEmpty(ctx, 'bogon prefixes');
};
