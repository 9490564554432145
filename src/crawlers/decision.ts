/**
 * Turns the evidence (official range, User-Agent, DNS check) into a
 * verification outcome. Pure: no I/O, same input, same answer.
 */
import type { DnsCheck } from './dns-proof.ts';
import { familiesClaimedBy, userAgentClaims } from './matching.ts';
import type { CrawlerFamily, VerificationMethod } from './registry.ts';

export type VerificationStatus = 'verified' | 'known_unverified' | 'not_known';

/** Machine reasons of `explanation.reason_code` (documented in docs/crawlers.md). */
export type ReasonCode =
  | 'verified_crawler'
  | 'dns_mismatch'
  | 'dns_timeout'
  | 'ua_mismatch'
  | 'range_only'
  | 'unverified_claim'
  | 'not_a_known_crawler';

export interface CrawlerVerification {
  status: VerificationStatus;
  /** The family the answer is about: the proven one, else the one whose range covers the IP. */
  family: CrawlerFamily | null;
  isKnownCrawler: boolean;
  isVerifiedCrawler: boolean;
  verifiedBy: VerificationMethod | null;
  /** The forward-confirmed PTR hostname, when DNS proved the family. */
  hostname: string | null;
  reasonCode: ReasonCode;
  text: string;
}

export interface VerificationEvidence {
  /** Family of the official range covering the IP (from the index), or null. */
  rangeFamily: CrawlerFamily | null;
  /** The caller-supplied User-Agent (null on caller-independent surfaces). */
  userAgent: string | null;
  /** The DNS check, or null when it was not attempted. */
  dns: DnsCheck | null;
}

function outcome(
  status: VerificationStatus,
  family: CrawlerFamily | null,
  reasonCode: ReasonCode,
  text: string,
  proof: { verifiedBy: VerificationMethod; hostname: string | null } | null = null,
): CrawlerVerification {
  return {
    status,
    family,
    isKnownCrawler: status !== 'not_known',
    isVerifiedCrawler: status === 'verified',
    verifiedBy: proof?.verifiedBy ?? null,
    hostname: proof?.hostname ?? null,
    reasonCode,
    text,
  };
}

/** Decides the verification status from the evidence (spec 4.3 rules 1 and 2). */
export function decideVerification(evidence: VerificationEvidence): CrawlerVerification {
  const { rangeFamily, userAgent, dns } = evidence;

  if (dns?.outcome === 'proven') {
    const f = dns.family;
    return outcome('verified', f, 'verified_crawler', `Verified ${f.name} (${f.provider}): ${dns.hostname} resolves back to this address.`, {
      verifiedBy: 'reverse_forward_dns',
      hostname: dns.hostname,
    });
  }

  if (rangeFamily?.verification === 'ip_range_and_user_agent') {
    const f = rangeFamily;
    if (userAgentClaims(userAgent, f)) {
      return outcome('verified', f, 'verified_crawler', `Verified ${f.name} (${f.provider}): the address is in its official ranges and the user agent carries its token.`, {
        verifiedBy: 'ip_range_and_user_agent',
        hostname: null,
      });
    }
    if (!userAgent) {
      return outcome('known_unverified', f, 'range_only', `The address is in the official ${f.name} ranges; ${f.provider} requires the user agent as well, and none was given.`);
    }
    return outcome('known_unverified', f, 'ua_mismatch', `The address is in the official ${f.name} ranges, but the user agent does not carry the ${f.name} token.`);
  }

  if (rangeFamily) {
    const f = rangeFamily;
    if (dns?.outcome === 'dns_failure') {
      return outcome('known_unverified', f, 'dns_timeout', `The address is in the official ${f.name} ranges, but the DNS check could not be completed in time.`);
    }
    return outcome('known_unverified', f, 'dns_mismatch', `The address is in the official ${f.name} ranges, but its reverse and forward DNS do not prove ${f.provider}.`);
  }

  if (dns?.outcome === 'forward_mismatch') {
    return outcome('not_known', null, 'dns_mismatch', `The reverse DNS name ${dns.hostname} claims ${dns.family.provider}, but it does not resolve back to this address.`);
  }
  if (dns?.outcome === 'dns_failure') {
    return outcome('not_known', null, 'dns_timeout', 'The address is in no official crawler range, and the DNS check could not be completed in time.');
  }
  const claimed = familiesClaimedBy(userAgent);
  if (claimed.length > 0) {
    return outcome('not_known', null, 'unverified_claim', `The user agent claims ${claimed[0].name}, but the address is neither in its official ranges nor proven by DNS.`);
  }
  return outcome('not_known', null, 'not_a_known_crawler', 'The address is in no official crawler range and its DNS names no known crawler.');
}
