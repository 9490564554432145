/**
 * `ris-whois`: RIPE RIS riswhoisdump, `origin<TAB>prefix<TAB>seen-by-peers`
 * with `%` comments. The same prefix appears once per origin; origins are
 * aggregated per prefix (several origins = MOAS; `{a,b}` = AS-set, which
 * sets `asSet`). Default routes (`::/0`, `0.0.0.0/0`) are dropped.
 *
 * Visibility: an origin seen by fewer than `minPeers` RIS peers (manifest
 * option, default 10) is dropped. RIS has several hundred full-table peers,
 * so a route seen by a handful is not globally propagated (leaks, internal
 * or NO_EXPORT more-specifics); keeping those would report false MOAS
 * conflicts and origins the Internet does not route to.
 */
import type { FeedParser } from '../feed/source.ts';
import type { RouteValue } from '../sink.ts';
import { parseCidr, type Cidr } from '../../src/net/ip.ts';
import { parseAsnDigits } from './asn-csv.ts';

/** Default least number of peers that must see an origin for it to count. */
export const DEFAULT_MIN_PEERS = 10;

/** Parses the origin column: `64500` or an AS-set `{64500,64501}`; null when invalid. */
export function parseRisOrigin(text: string): { asns: number[]; asSet: boolean } | null {
  const isSet = text.charCodeAt(0) === 123 && text.charCodeAt(text.length - 1) === 125;
  const parts = isSet ? text.slice(1, -1).split(',') : [text];
  const asns: number[] = [];
  for (const p of parts) {
    const asn = parseAsnDigits(p.trim());
    if (asn < 0) return null;
    asns.push(asn);
  }
  return asns.length > 0 ? { asns, asSet: isSet } : null;
}

interface PrefixRoutes {
  cidr: Cidr;
  origins: number[];
  asSet: boolean;
}

function minPeersOption(v: unknown, fail: (r: string) => never): number {
  if (v === undefined) return DEFAULT_MIN_PEERS;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) fail(`"minPeers" must be a non-negative integer`);
  return n;
}

/** Reports each visible prefix once with all its origins. */
export const parse: FeedParser = async (ctx, sink) => {
  const minPeers = minPeersOption(ctx.options.minPeers, (r) => ctx.fail(r));
  // Keyed by prefix text: the dump lists a prefix's origins on adjacent lines,
  // but a map keeps the aggregation right for any order.
  const byPrefix = new Map<string, PrefixRoutes>();
  let parsedLines = 0;
  let badStreak = 0;
  for await (const [line, n] of ctx.lines()) {
    if (line === '' || line.charCodeAt(0) === 37) {
      // blank or % comment; `% This file was generated at Fri May 27 02:06:01 UTC 2022.`
      const generated = /^%\s*This file was generated at (.+?)\.?$/.exec(line);
      if (generated) ctx.reportDate(generated[1]);
      continue;
    }
    const f = line.split('\t');
    const origin = f.length === 3 ? parseRisOrigin(f[0]) : null;
    const peers = f.length === 3 && /^\d+$/.test(f[2].trim()) ? Number(f[2]) : -1;
    const cidr = f.length === 3 ? byPrefix.get(f[1])?.cidr ?? parseCidr(f[1]) : null;
    if (!origin || !cidr || peers < 0) {
      ctx.skip(n, f.length !== 3 ? 'expected origin<TAB>prefix<TAB>peers' : !origin ? `bad origin "${f[0]}"` : !cidr ? `bad prefix "${f[1]}"` : `bad peer count "${f[2]}"`);
      if (parsedLines === 0 && ++badStreak >= 10) ctx.fail('not a RIS whois dump: no line parses', n);
      continue;
    }
    parsedLines++;
    if (cidr.len === 0 || peers < minPeers) continue; // default route / not globally visible
    let entry = byPrefix.get(f[1]);
    if (!entry) {
      entry = { cidr, origins: [], asSet: false };
      byPrefix.set(f[1], entry);
      // Aggregated before reporting: the bound on ranges is checked on what is held.
      ctx.checkHeld(byPrefix.size, n);
    }
    if (origin.asSet) entry.asSet = true;
    for (const asn of origin.asns) if (!entry.origins.includes(asn)) entry.origins.push(asn);
  }
  if (parsedLines === 0) ctx.fail('no routes found');
  for (const { cidr, origins, asSet } of byPrefix.values()) {
    const value: RouteValue = asSet ? { prefixLen: cidr.len, origins, asSet } : { prefixLen: cidr.len, origins };
    sink.route(cidr.family, cidr.start, cidr.end, value);
    ctx.rows++;
  }
};
