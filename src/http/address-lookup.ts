/**
 * What every address route does first: look the address up in the serving
 * snapshot (INVALID_IP when it is none), count the lookup, and get the
 * caller-independent scoring context, whose crawler proof may wait a bounded
 * time for DNS.
 */
import { verifiedCrawlerOf } from '../crawlers/lookup-flags.ts';
import type { CrawlerProof } from '../crawlers/verifier.ts';
import { ApiError } from '../errors.ts';
import type { LookupHit } from '../index/record.ts';
import { invalidIp } from '../lookup/invalid-ip.ts';
import { lookupAddress } from '../lookup/overrides/overlay.ts';
import type { ServingSnapshot } from '../lookup/serving.ts';
import type { ScoringContext } from '../scoring/index.ts';
import type { AppServices } from './services.ts';


const NO_CLIENT_IP = new ApiError('NO_CLIENT_IP', 'The caller IP address cannot be determined', {});

/** The caller's own address (the `current` routes, auto mode), or the spec's NO_CLIENT_IP when it cannot be determined. */
export function callerIpOrThrow(ip: string | null): string {
  if (!ip) throw NO_CLIENT_IP;
  return ip;
}

/** How long a GET lookup may wait for a DNS crawler proof before answering without it. */
export const CRAWLER_PROOF_BUDGET_MS = 50;

/** Looks up an address text in a snapshot (default: the one in force) or throws INVALID_IP with the text provided. */
export function lookupOrThrow(services: AppServices, ip: string, snapshot: ServingSnapshot = services.serving.snapshot): LookupHit {
  const hit = lookupAddress(snapshot.reader, snapshot.overrides, ip);
  if (!hit) throw invalidIp(ip);
  services.metrics.lookup(hit.family);
  return hit;
}

/**
 * The crawler proof of a hit for a GET lookup: a value when none must be
 * awaited (cached, or the range wants no DNS check), else a promise bounded
 * by CRAWLER_PROOF_BUDGET_MS.
 */
export function crawlerProofOf(services: AppServices, hit: LookupHit): CrawlerProof | null | Promise<CrawlerProof | null> {
  return services.crawlers.startProof(hit, CRAWLER_PROOF_BUDGET_MS);
}

/**
 * The caller-independent scoring context of a hit (may wait for a bounded DNS
 * check), with the coverage of the snapshot the hit came from (default: the
 * one in force when called, read before waiting).
 */
export async function scoringContextFor(services: AppServices, hit: LookupHit, snapshot: ServingSnapshot = services.serving.snapshot): Promise<ScoringContext> {
  const coverage = snapshot.coverage;
  return { verifiedCrawler: verifiedCrawlerOf(await crawlerProofOf(services, hit)), coverage };
}
