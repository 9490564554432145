/**
 * Forward-confirmed reverse DNS (spec 4.3 rule 1): the address's PTR
 * hostname must lie under a registered crawler suffix, and a forward
 * lookup of that hostname must return the same address.
 */
import { formatIp, type ParsedIp } from '../net/ip.ts';
import { familiesForHostname } from './matching.ts';
import type { CrawlerFamily } from './registry.ts';
import { MAX_PTR_NAMES } from './dns/answer-bounds.ts';
import { reverseName } from './dns/reverse-name.ts';
import { DnsFailure, type DnsAnswer, type QueryType } from './dns/types.ts';


/** What the DNS said about an address. */
export type DnsCheck =
  | { outcome: 'proven'; family: CrawlerFamily; hostname: string; ttlSeconds: number }
  /** No PTR record at all. */
  | { outcome: 'no_ptr' }
  /** PTR names exist but none is under a crawler suffix. */
  | { outcome: 'not_crawler_host'; hostnames: string[] }
  /** A PTR name claims a crawler domain but does not resolve back to the address. */
  | { outcome: 'forward_mismatch'; family: CrawlerFamily; hostname: string }
  /** DNS could not be completed (timeout or server failure). */
  | { outcome: 'dns_failure'; reason: string };

/** Asks one DNS question; the resolver may answer from cache. */
export type Resolve = (name: string, type: QueryType) => Promise<DnsAnswer>;

/**
 * Picks which family a proven hostname stands for when several suffixes
 * match (e.g. `*.google.com` is both Google special crawlers and
 * user-triggered fetchers): a preferred key (the range covering the IP,
 * then families the User-Agent names) wins, else the most specific suffix.
 */
export function chooseFamily(candidates: CrawlerFamily[], preferredKeys: readonly string[]): CrawlerFamily {
  for (const key of preferredKeys) {
    const match = candidates.find((f) => f.key === key);
    if (match) return match;
  }
  return candidates[0];
}

/** Runs the reverse-then-forward check for one address. */
export async function checkReverseForwardDns(
  ip: ParsedIp,
  resolve: Resolve,
  preferredKeys: readonly string[] = [],
): Promise<DnsCheck> {
  const address = formatIp(ip.family, ip.value);
  let ptr: DnsAnswer;
  try {
    ptr = await resolve(reverseName(ip), 'PTR');
  } catch (err) {
    return { outcome: 'dns_failure', reason: failureText(err) };
  }
  if (ptr.kind === 'negative') return { outcome: 'no_ptr' };

  const hostnames = ptr.values.slice(0, MAX_PTR_NAMES);
  let mismatch: DnsCheck | null = null;
  let failure: string | null = null;
  for (const hostname of hostnames) {
    const families = familiesForHostname(hostname);
    if (families.length === 0) continue;
    const family = chooseFamily(families, preferredKeys);
    let forward: DnsAnswer;
    try {
      forward = await resolve(hostname, ip.family === 4 ? 'A' : 'AAAA');
    } catch (err) {
      failure ??= failureText(err);
      continue;
    }
    if (forward.kind === 'records' && forward.values.includes(address)) {
      const ttlSeconds = Math.min(ptr.ttl, forward.ttl);
      return { outcome: 'proven', family, hostname, ttlSeconds };
    }
    mismatch ??= { outcome: 'forward_mismatch', family, hostname };
  }
  // An unfinished check is reported as such rather than as a mismatch: it proves nothing either way.
  if (failure !== null && mismatch === null) return { outcome: 'dns_failure', reason: failure };
  return mismatch ?? { outcome: 'not_crawler_host', hostnames };
}

function failureText(err: unknown): string {
  return err instanceof DnsFailure ? `${err.reason}: ${err.message}` : String(err);
}
