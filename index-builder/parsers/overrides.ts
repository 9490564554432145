/**
 * `overrides`: the operator's overrides file (as IPINTEL_OVERRIDES), read by
 * the one reader of that format (src/contract/overrides.ts). The accepted
 * entries go into the index file as they are, kept apart from the merged
 * layers: the server lays them over every answer exactly as it lays the
 * IPINTEL_OVERRIDES file, so they outrank every feed (most specific entry
 * wins). A bad line is skipped with its line number; a file refused as a
 * whole fails the build.
 */
import { OverridesFileError, parseOverridesText } from '../../src/contract/overrides.ts';
import { formatCidr } from '../../src/net/ip.ts';
import type { FeedParser } from '../feed/source.ts';

/** Parses an `overrides` source. */
export const parse: FeedParser = async (ctx, sink) => {
  const keep = sink.overrides?.bind(sink);
  if (keep === undefined) return ctx.fail('this build does not keep overrides');
  let parsed;
  try {
    parsed = parseOverridesText(ctx.readText(), ctx.displayPath);
  } catch (e) {
    if (e instanceof OverridesFileError) ctx.fail(e.message);
    throw e;
  }
  for (const e of parsed.errors) ctx.skip(e.line, e.message);
  // Bad lines beyond the reported ones count as skipped without a sample.
  ctx.skipped += parsed.badLines - parsed.errors.length;
  keep(parsed.entries.map((e) => JSON.stringify({ cidr: formatCidr(e.family, e.start, e.len), ...e.fields })));
  ctx.rows = parsed.entries.length;
};
