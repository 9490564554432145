/**
 * Who is calling: resolved once per request by the request path (caller IP,
 * API key -> tier), handed to each route's handler, and recorded on the
 * request for the mounted Elysia routes, which read it through callerOf().
 */
import type { Tier } from '../tiers.ts';

export interface Caller {
  /** The caller's IP (socket, or forwarded from a trusted proxy); null when unknown. */
  ip: string | null;
  tier: Tier;
  /** Id of the API key used, when one was sent and valid. */
  keyId: string | null;
  /** Owner of the key, when keyed. */
  userId: string | null;
}

const ANONYMOUS: Caller = Object.freeze({ ip: null, tier: 'anonymous', keyId: null, userId: null }) as Caller;
const callers = new WeakMap<Request, Caller>();

/** Records the resolved caller of a request. */
export function setCaller(request: Request, caller: Caller): void {
  callers.set(request, caller);
}

/** The resolved caller of a request (anonymous with unknown IP when not resolved). */
export function callerOf(request: Request): Caller {
  return callers.get(request) ?? ANONYMOUS;
}
