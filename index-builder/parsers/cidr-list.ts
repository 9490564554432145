/**
 * `cidr-list`: one CIDR or bare address a line, with `#`/`;` comments (whole
 * line or inline), trailing spaces and a possibly missing final newline.
 *
 * Category `threat` reports a threat-list hit named by `provider` (default
 * `threat-list`); every other category reports a provider range.
 *
 * Also exports the line-list building blocks shared by the other text-list
 * parsers (bogons, crawler ranges) and the manifest-option readers shared by
 * the provider parsers.
 */
import type { FeedParser, SourceContext } from '../feed/source.ts';
import { CATEGORIES, type BuildSink, type Category, type ProviderValue } from '../sink.ts';
import { parseCidr, type Addr, type Cidr, type Family } from '../../src/net/ip.ts';

/** Longest excerpt of a bad value quoted in a skip reason. */
const MAX_QUOTED = 60;

/** A value shortened for an error message. */
export function quoted(text: string): string {
  return JSON.stringify(text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text);
}

/** The data part of a line: `#`/`;` comments (whole-line or inline) and surrounding whitespace removed. */
export function stripComment(line: string): string {
  let cut = line.length;
  const hash = line.indexOf('#');
  if (hash >= 0) cut = hash;
  const semi = line.indexOf(';');
  if (semi >= 0 && semi < cut) cut = semi;
  return line.slice(0, cut).trim();
}

/**
 * Streams the CIDRs of a one-prefix-a-line file; malformed lines are skipped
 * with their number. `onComment` sees each whole-line comment (a header).
 */
export async function* cidrLines(ctx: SourceContext, onComment?: (line: string) => void): AsyncGenerator<Cidr> {
  for await (const [raw, lineNo] of ctx.lines()) {
    const text = stripComment(raw);
    if (text === '') {
      if (onComment && raw !== '') onComment(raw);
      continue;
    }
    const cidr = parseCidr(text);
    if (!cidr) {
      ctx.skip(lineNo, `not a CIDR or address: ${quoted(text)}`);
      continue;
    }
    yield cidr;
  }
}

/** Fails the source when it reported nothing: the file is not in the expected format at all. */
export function failIfEmpty(ctx: SourceContext, what: string): void {
  if (ctx.rows > 0) return;
  const first = ctx.skipSamples[0];
  if (first) ctx.fail(`no ${what} parsed (first bad line: ${first.reason})`, first.line || undefined);
  ctx.fail(`no ${what} found`);
}

/** The manifest `category`, validated against CATEGORIES; `fallback` when absent, else a clear error. */
export function categoryOption(ctx: SourceContext, fallback?: Category): Category {
  const raw = ctx.options.category;
  if ((raw === undefined || raw === '') && fallback !== undefined) return fallback;
  const value = ctx.requireOption('category');
  if (!(CATEGORIES as readonly string[]).includes(value)) {
    ctx.fail(`unknown category ${quoted(value)} (expected one of ${CATEGORIES.join(', ')})`);
  }
  return value as Category;
}

/** The optional manifest `provider` (operator name), or undefined. */
export function providerOption(ctx: SourceContext): string | undefined {
  const raw = ctx.options.provider;
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') ctx.fail('manifest key "provider" must be a string');
  return raw.trim() === '' ? undefined : raw.trim();
}

/** Default list name of a threat-category list without a provider. */
export const DEFAULT_THREAT_LIST = 'threat-list';

/**
 * Reports one categorised range: `threat` becomes a threat-list hit named by
 * the provider, anything else a provider value (undefined fields left out).
 */
export function reportCategorized(
  sink: BuildSink,
  family: Family,
  start: Addr,
  end: Addr,
  value: ProviderValue,
): void {
  if (value.category === 'threat') {
    sink.threatList(family, start, end, { list: value.provider ?? DEFAULT_THREAT_LIST });
    return;
  }
  const clean: ProviderValue = { category: value.category };
  if (value.provider !== undefined) clean.provider = value.provider;
  if (value.service !== undefined) clean.service = value.service;
  if (value.region !== undefined) clean.region = value.region;
  sink.provider(family, start, end, clean);
}

/** Parses a `cidr-list` source. */
export const parse: FeedParser = async (ctx, sink) => {
  const category = categoryOption(ctx);
  const provider = providerOption(ctx);
  for await (const cidr of cidrLines(ctx)) {
    reportCategorized(sink, cidr.family, cidr.start, cidr.end, { category, provider });
    ctx.rows++;
  }
  failIfEmpty(ctx, 'CIDRs');
};
