/**
 * A host name's addresses, bounded in time: the system resolver's own
 * retries can take minutes, and no check of a URL from outside may wait on
 * them for ever (the pull URL's and a feed redirect's address checks).
 */
import { lookup as systemLookup } from 'node:dns/promises';
import { parseIp } from './ip.ts';

/** Longest wait for a host's addresses. */
export const RESOLVE_TIMEOUT_MS = 10_000;

/** What resolves a name (node:dns/promises `lookup` with `all`; a test gives its own). */
export type HostLookup = (host: string) => Promise<{ address: string }[]>;

export interface ResolveOptions {
  timeoutMs?: number;
  lookup?: HostLookup;
}

const viaSystem: HostLookup = (host) => systemLookup(host, { all: true, verbatim: true });

/** Every address `host` (a name, an address, or a bracketed IPv6 address) stands for; rejects when it does not resolve within the timeout. */
export async function resolveHost(host: string, options: ResolveOptions = {}): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (parseIp(bare) !== null) return [bare];
  const timeoutMs = options.timeoutMs ?? RESOLVE_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)));
  try {
    return (await Promise.race([(options.lookup ?? viaSystem)(bare), late])).map((a) => a.address);
  } finally {
    clearTimeout(timer);
  }
}
