/**
 * What every address route does first: look the address up in the serving
 * snapshot (INVALID_IP when it is none), count the lookup, and get the
 * caller-independent scoring context, whose crawler proof may wait a bounded
 * time for DNS.
 */
import { verifiedCrawlerOf } from '../crawlers/lookup-flags.ts';
import { ApiError } from '../errors.ts';
import type { LookupHit } from '../index/record.ts';
import { crawlerProofOf } from '../lookup/answerer.ts';
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

/** Looks up an address text in a snapshot (default: the one in force) or throws INVALID_IP with the text provided. */
export function lookupOrThrow(services: AppServices, ip: string, snapshot: ServingSnapshot = services.serving.snapshot): LookupHit {
  const hit = lookupAddress(snapshot.reader, snapshot.overrides, ip);
  if (!hit) throw invalidIp(ip);
  services.metrics.lookup(hit.family);
  return hit;
}

/**
 * The caller-independent scoring context of a hit (may wait for a bounded DNS
 * check), with the coverage of the snapshot the hit came from (default: the
 * one in force when called, read before waiting).
 */
export async function scoringContextFor(services: AppServices, hit: LookupHit, snapshot: ServingSnapshot = services.serving.snapshot): Promise<ScoringContext> {
  const coverage = snapshot.coverage;
  return { verifiedCrawler: verifiedCrawlerOf(await crawlerProofOf(services.crawlers, hit)), coverage };
}
