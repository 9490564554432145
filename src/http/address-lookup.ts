/**
 * What every address route does first: look the address up in the serving
 * snapshot (INVALID_IP when it is none) and count the lookup; and where the
 * snapshot's answerer (src/lookup/answerer.ts), which decides what an answer
 * waits for, asks the live facts: the crawler verifier (a DNS proof waited
 * for a bounded time), the RDAP client, the clock.
 */
import { verifiedCrawlerOf } from '../crawlers/lookup-flags.ts';
import { ApiError } from '../api-error.ts';
import type { LookupHit } from '../index/record.ts';
import type { LiveSources } from '../lookup/answerer.ts';
import { ownerFromRdap, type RdapResult } from '../rdap/index.ts';
import { invalidIp } from '../lookup/invalid-ip.ts';
import { lookupAddress } from '../lookup/overrides/overlay.ts';
import type { ServingSnapshot } from '../lookup/serving.ts';
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

/** How long a GET lookup may wait for a DNS crawler proof before answering without it. */
export const CRAWLER_PROOF_BUDGET_MS = 50;

const emptyRdap: RdapResult = { available: false, network: null, contacts: [] };
const liveSources = new WeakMap<AppServices, LiveSources<RdapResult>>();

/**
 * The live facts of a set of services as the answerer asks them (one object,
 * made once): each reads the services when asked, so a verifier or client a
 * test swaps in is the one used.
 */
export function liveSourcesOf(services: AppServices): LiveSources<RdapResult> {
  let live = liveSources.get(services);
  if (live !== undefined) return live;
  live = {
    cachedProof: (hit) => verifiedCrawlerOf(services.crawlers.proofFor(hit)),
    proof(hit) {
      // A value, not a promise, when nothing is to be awaited (a cached proof, or a range no DNS check applies to).
      const proof = services.crawlers.startProof(hit, CRAWLER_PROOF_BUDGET_MS);
      return proof instanceof Promise ? proof.then(verifiedCrawlerOf) : verifiedCrawlerOf(proof);
    },
    rdap: (ip) => services.rdap.lookup(ip),
    // ownerFromRdap never yields a person.
    rdapOwner: (hit, fetched) => ownerFromRdap(fetched ?? services.rdap.peek(hit) ?? emptyRdap),
    now: () => services.now(),
  };
  liveSources.set(services, live);
  return live;
}
