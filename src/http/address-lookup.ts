/**
 * What every address route does first: look the address up (INVALID_IP
 * when it is none), count the lookup, and get the caller-independent
 * scoring context, whose crawler proof may wait a bounded time for DNS.
 */
import { verifiedCrawlerOf } from '../crawlers/lookup-flags.ts';
import type { CrawlerProof } from '../crawlers/verifier.ts';
import { ApiError } from '../errors.ts';
import type { LookupHit } from '../index/record.ts';
import { lookupAddress } from '../lookup/overrides/overlay.ts';
import type { ScoringContext } from '../scoring/index.ts';
import type { AppServices } from './services.ts';

/** How long a GET lookup may wait for a DNS crawler proof before answering without it. */
export const CRAWLER_PROOF_BUDGET_MS = 50;

/** The spec's INVALID_IP error for a text. */
export function invalidIp(text: string): ApiError {
  return new ApiError('INVALID_IP', `Not a valid IPv4 or IPv6 address: ${text.slice(0, 100)}`, { provided: text });
}

/** Looks up an address text or throws INVALID_IP with the text provided. */
export function lookupOrThrow(s: AppServices, ip: string): LookupHit {
  const hit = lookupAddress(s.index.current, s.overrides.tableFor(s.index.current), ip);
  if (!hit) throw invalidIp(ip);
  s.metrics.lookup(hit.family);
  return hit;
}

/** The scoring context of a hit given its crawler proof (null: none). */
export function scoringContextWith(s: AppServices, proof: CrawlerProof | null): ScoringContext {
  return { verifiedCrawler: verifiedCrawlerOf(proof), coverage: s.index.coverage };
}

/**
 * The crawler proof of a hit for a GET lookup: a value when none must be
 * awaited (cached, or the range wants no DNS check), else a promise bounded
 * by CRAWLER_PROOF_BUDGET_MS.
 */
export function crawlerProofOf(s: AppServices, hit: LookupHit): CrawlerProof | null | Promise<CrawlerProof | null> {
  return s.crawlers.startProof(hit, CRAWLER_PROOF_BUDGET_MS);
}

/** The caller-independent scoring context of a hit (may wait for a bounded DNS check). */
export async function scoringContextFor(s: AppServices, hit: LookupHit): Promise<ScoringContext> {
  return scoringContextWith(s, await crawlerProofOf(s, hit));
}
