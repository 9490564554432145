/**
 * `crawler-ranges`: a crawler operator's official ranges, either Google-style
 * JSON (`{"prefixes":[{"ipv4Prefix":..},{"ipv6Prefix":..}]}`, used by Google,
 * Bing, Apple, OpenAI, Perplexity, DuckDuckGo, Ahrefs) or one CIDR a line.
 * Every range is reported under the manifest key `crawler`.
 */
import { reportDocumentDate } from './provider-formats/report.ts';
import type { FeedParser, SourceContext } from '../feed/source.ts';
import type { BuildSink } from '../sink.ts';
import { parseCidr } from '../../src/net/ip.ts';
import { cidrLines, failIfEmpty, quoted } from './cidr-list.ts';
import { isObject } from './provider-formats/json-shape.ts';

/** Crawler keys are registry slugs. */
const CRAWLER_KEY = /^[a-z0-9-]+$/;

/** Parses a `crawler-ranges` source. */
export const parse: FeedParser = async (ctx, sink) => {
  const key = ctx.requireOption('crawler');
  if (!CRAWLER_KEY.test(key)) ctx.fail(`crawler key ${quoted(key)} must match ${CRAWLER_KEY}`);
  // Sniffed from the first data line: the whole document is read (and parsed) once, by the branch that needs it.
  if ((await ctx.firstDataChar()) === '{') {
    reportGoogleStyle(ctx, sink, key);
  } else {
    for await (const cidr of cidrLines(ctx)) {
      sink.crawler(cidr.family, cidr.start, cidr.end, key);
      ctx.rows++;
    }
  }
  failIfEmpty(ctx, 'crawler prefixes');
};

/** Reads `prefixes[].ipv4Prefix|ipv6Prefix`; a prefix of the wrong family for its key is skipped. */
function reportGoogleStyle(ctx: SourceContext, sink: BuildSink, key: string): void {
  const doc = ctx.readJson();
  reportDocumentDate(ctx, doc);
  if (!isObject(doc) || !Array.isArray(doc.prefixes)) return ctx.fail('expected a JSON object with a "prefixes" array');
  doc.prefixes.forEach((entry: unknown, i: number) => {
    const where = `prefixes[${i}]`;
    const v4 = isObject(entry) ? entry.ipv4Prefix : undefined;
    const v6 = isObject(entry) ? entry.ipv6Prefix : undefined;
    const text = typeof v4 === 'string' ? v4 : typeof v6 === 'string' ? v6 : undefined;
    if (text === undefined) return ctx.skip(0, `${where}: no ipv4Prefix or ipv6Prefix string`);
    const cidr = parseCidr(text.trim());
    const expected = typeof v4 === 'string' ? 4 : 6;
    if (!cidr || cidr.family !== expected) return ctx.skip(0, `${where}: not an IPv${expected} CIDR: ${quoted(text)}`);
    sink.crawler(cidr.family, cidr.start, cidr.end, key);
    ctx.rows++;
  });
}
