/**
 * The crawler fact a GET lookup gives scoring (spec 2.1 classification, 4.3
 * rule 3): the cached DNS proof only, caller-independent, so the answer can
 * be shared-cached. `is_known_crawler` comes from the record's range alone
 * (scoring/classify.ts). Pure.
 */
import type { CrawlerProof } from './verifier.ts';

/** The scoring context's verified crawler for a proof (null without one); reads nothing of the record. */
export function verifiedCrawlerOf(proof: CrawlerProof | null): { key: string; hostname: string } | null {
  return proof ? { key: proof.key, hostname: proof.hostname } : null;
}
