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
import { parseCidr, prefixRange, type Cidr, type Family } from '../../src/net/ip.ts';
import { addrAt, pushAddr } from '../merge/addr-words.ts';
import { GrowableU32 } from '../merge/growable.ts';
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

/** Words per entry: family, prefix length, the start's four words (IPv4: the first). */
const ROW = 6;

/**
 * Prefixes aggregated before reporting, as typed columns: a dump's prefixes
 * grow with the routing table, and an object, two BigInts and an origin array
 * apiece would dominate what the parse holds. Entry i is the i-th distinct
 * prefix text; its first origin sits in a column, further ones (MOAS, AS-sets:
 * the rare case) in a side map.
 */
class PrefixRoutes {
  private readonly ids = new Map<string, number>();
  private readonly rows = new GrowableU32(1 << 16);
  private readonly firstOrigin: number[] = [];
  private readonly asSets = new Set<number>();
  private readonly moreOrigins = new Map<number, number[]>();

  get size(): number {
    return this.firstOrigin.length;
  }

  /** The entry of a prefix text already seen (-1: none). */
  idOf(text: string): number {
    return this.ids.get(text) ?? -1;
  }

  /** A new entry for a prefix (no origins yet). */
  add(text: string, cidr: Cidr): number {
    const id = this.size;
    this.ids.set(text, id);
    this.rows.push(cidr.family);
    this.rows.push(cidr.len);
    if (cidr.family === 4) for (const w of [cidr.start as number, 0, 0, 0]) this.rows.push(w);
    else pushAddr(this.rows, 6, cidr.start);
    this.firstOrigin.push(-1);
    return id;
  }

  /** The prefix of entry id, rebuilt from its words. */
  cidrOf(id: number): Cidr {
    const family = this.rows.at(id * ROW) as Family;
    const len = this.rows.at(id * ROW + 1);
    const base = family === 4 ? this.rows.at(id * ROW + 2) : addrAt(this.rows.raw().subarray(id * ROW + 2, id * ROW + 6), 0, 4);
    return { family, len, ...prefixRange(family, base, len) };
  }

  /** Adds origins in order of appearance, once each; an AS-set marks the prefix. */
  addOrigins(id: number, asns: readonly number[], asSet: boolean): void {
    if (asSet) this.asSets.add(id);
    for (const asn of asns) {
      const first = this.firstOrigin[id];
      if (first < 0) {
        this.firstOrigin[id] = asn;
        continue;
      }
      if (first === asn) continue;
      let more = this.moreOrigins.get(id);
      if (!more) this.moreOrigins.set(id, (more = []));
      if (!more.includes(asn)) more.push(asn);
    }
  }

  /** The route of entry id as reported. */
  value(id: number): RouteValue {
    const first = this.firstOrigin[id];
    const origins = first < 0 ? [] : [first, ...(this.moreOrigins.get(id) ?? [])];
    const prefixLen = this.rows.at(id * ROW + 1);
    return this.asSets.has(id) ? { prefixLen, origins, asSet: true } : { prefixLen, origins };
  }
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
  const byPrefix = new PrefixRoutes();
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
    const known = f.length === 3 ? byPrefix.idOf(f[1]) : -1;
    const cidr = f.length !== 3 ? null : known >= 0 ? byPrefix.cidrOf(known) : parseCidr(f[1]);
    if (!origin || !cidr || peers < 0) {
      ctx.skip(n, f.length !== 3 ? 'expected origin<TAB>prefix<TAB>peers' : !origin ? `bad origin "${f[0]}"` : !cidr ? `bad prefix "${f[1]}"` : `bad peer count "${f[2]}"`);
      if (parsedLines === 0 && ++badStreak >= 10) ctx.fail('not a RIS whois dump: no line parses', n);
      continue;
    }
    parsedLines++;
    if (cidr.len === 0 || peers < minPeers) continue; // default route / not globally visible
    let entry = known;
    if (entry < 0) {
      entry = byPrefix.add(f[1], cidr);
      // Aggregated before reporting: the bound on ranges is checked on what is held.
      ctx.checkHeld(byPrefix.size, n);
    }
    byPrefix.addOrigins(entry, origin.asns, origin.asSet);
  }
  if (parsedLines === 0) ctx.fail('no routes found');
  for (let id = 0; id < byPrefix.size; id++) {
    const cidr = byPrefix.cidrOf(id);
    sink.route(cidr.family, cidr.start, cidr.end, byPrefix.value(id));
    ctx.rows++;
  }
};
