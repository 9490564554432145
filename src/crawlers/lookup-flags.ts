/**
 * The crawler facts of a GET lookup (spec 2.1 classification, 4.3 rule 3):
 * caller-independent only, so the answer can be shared-cached. Pure.
 */
import type { LookupHit } from '../index/record.ts';
import { crawlerFamily, type CrawlerFamily } from './registry.ts';
import type { CrawlerProof } from './verifier.ts';

export interface LookupCrawlerFlags {
  /** In an official crawler range (never from a User-Agent). */
  isKnownCrawler: boolean;
  /** A cached forward-confirmed reverse-DNS proof exists for the address. */
  isVerifiedCrawler: boolean;
  /** Family of the proof, else of the covering range; null when neither. */
  family: CrawlerFamily | null;
  /** What the scoring helper consumes (the verified_crawler_protection guardrail). */
  verifiedCrawler: { key: string; hostname: string } | null;
}

/** Crawler flags of a lookup from its index hit and the DNS proof (proofFor / startProof). */
export function lookupCrawlerFlags(hit: LookupHit | null, proof: CrawlerProof | null): LookupCrawlerFlags {
  const rangeKey = hit?.record.crawler ?? null;
  return {
    isKnownCrawler: rangeKey !== null,
    isVerifiedCrawler: proof !== null,
    family: crawlerFamily(proof?.key ?? rangeKey),
    verifiedCrawler: verifiedCrawlerOf(proof),
  };
}

/** The scoring context's verified crawler for a proof (null without one); reads nothing of the record. */
export function verifiedCrawlerOf(proof: CrawlerProof | null): LookupCrawlerFlags['verifiedCrawler'] {
  return proof ? { key: proof.key, hostname: proof.hostname } : null;
}
