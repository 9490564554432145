/**
 * The spec 2.4 crawler verification object, built from a verification
 * outcome and the index hit. Pure.
 */
import type { LookupHit } from '../index/record.ts';
import type { Static } from '@sinclair/typebox';
import type { CrawlerNetwork as CrawlerNetworkSchema, CrawlerVerification } from '../contract/lookups.ts';
import type { CrawlerVerification as Verification } from './decision.ts';

/** `network` of the verification object (declared in src/contract/lookups.ts). */
export type CrawlerNetwork = Static<typeof CrawlerNetworkSchema>;

/** The spec 2.4 verification object (declared in src/contract/lookups.ts). */
export type CrawlerVerifyBody = Static<typeof CrawlerVerification>;

/**
 * `network` of the verification object from the index: the owner is the
 * ASN's registered name (the index carries no per-block RDAP owner), then
 * the range publisher's name; the allocation is the RIR block.
 */
export function crawlerNetwork(hit: LookupHit | null): CrawlerNetwork {
  const record = hit?.record;
  const allocation = record?.allocation;
  return {
    owner: record?.asn?.name ?? record?.provider?.name ?? null,
    allocation: allocation ? { cidr: allocation.cidr, registry: allocation.registry, country: allocation.countryCode } : null,
  };
}

/** Assembles the response body of POST /v1/crawler/verify. */
export function crawlerVerifyBody(
  ip: string,
  userAgent: string | null,
  verification: Verification,
  hit: LookupHit | null,
): CrawlerVerifyBody {
  const family = verification.family;
  return {
    ip,
    user_agent: userAgent,
    verification_status: verification.status,
    classification: {
      is_known_crawler: verification.isKnownCrawler,
      is_verified_crawler: verification.isVerifiedCrawler,
      crawler_provider: family?.provider ?? null,
      crawler_type: family?.crawlerType ?? null,
      crawler_verified_by: verification.verifiedBy,
      crawler_hostname: verification.hostname,
    },
    network: crawlerNetwork(hit),
    explanation: { text: verification.text, reason_code: verification.reasonCode },
  };
}
