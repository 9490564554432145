/**
 * Pure matching of hostnames and user agents against the registry.
 */
import { CRAWLER_FAMILIES, type CrawlerFamily } from './registry.ts';

/** Lower-cases a DNS name and drops the root dot, so comparisons are exact. */
export function normalizeHostname(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * True when `hostname` lies strictly under `suffix` on a label boundary:
 * `crawl-1.googlebot.com` is under `googlebot.com`; `evilgooglebot.com`,
 * `googlebot.com.evil.example` and the bare apex are not (crawler hosts are
 * always named below the provider's domain).
 */
export function hostnameIsUnder(hostname: string, suffix: string): boolean {
  const host = normalizeHostname(hostname);
  const tail = '.' + normalizeHostname(suffix);
  return host.length > tail.length && host.endsWith(tail);
}

/**
 * Families whose DNS suffixes cover a hostname, most specific suffix first
 * (so `x.gae.googleusercontent.com` names user-triggered fetchers before any
 * broader match), registry order on ties.
 */
export function familiesForHostname(hostname: string): CrawlerFamily[] {
  const matches: Array<{ family: CrawlerFamily; length: number; order: number }> = [];
  CRAWLER_FAMILIES.forEach((family, order) => {
    if (family.verification !== 'reverse_forward_dns') return;
    let best = -1;
    for (const suffix of family.dnsSuffixes) {
      if (hostnameIsUnder(hostname, suffix)) best = Math.max(best, suffix.length);
    }
    if (best >= 0) matches.push({ family, length: best, order });
  });
  matches.sort((a, b) => b.length - a.length || a.order - b.order);
  return matches.map((m) => m.family);
}

/** True when the User-Agent carries one of the family's tokens (case-insensitive). */
export function userAgentClaims(userAgent: string | null, family: CrawlerFamily): boolean {
  if (!userAgent) return false;
  const ua = userAgent.toLowerCase();
  return family.userAgentTokens.some((token) => ua.includes(token.toLowerCase()));
}

/** Every family whose token the User-Agent carries, in registry order. */
export function familiesClaimedBy(userAgent: string | null): CrawlerFamily[] {
  return CRAWLER_FAMILIES.filter((family) => userAgentClaims(userAgent, family));
}
