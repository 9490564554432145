/**
 * What every address route does first: look the address up in the serving
 * snapshot (INVALID_IP when it is none) and count the lookup. What the answer
 * then waits for (a crawler's DNS proof) the snapshot's answerer decides
 * (src/lookup/answerer.ts).
 */
import { ApiError } from '../errors.ts';
import type { LookupHit } from '../index/record.ts';
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
