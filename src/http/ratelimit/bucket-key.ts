/**
 * Which bucket a request drains: the API key for keyed calls, the caller's
 * address for anonymous ones. IPv6 callers share one bucket per /64 because
 * a single host (or LAN) is routinely handed a whole /64 and could otherwise
 * rotate through 2^64 fresh buckets.
 */
import type { Caller } from '../caller.ts';
import { embeddedIPv4Words, formatIPv4, parseIPv6Groups } from '../../net/ip.ts';

/** Bucket used for anonymous calls whose IP could not be determined (they share one). */
export const UNKNOWN_IP_BUCKET = 'ip:unknown';

const groups = new Uint16Array(8);

/** The bucket key of a caller: `key:<id>`, `ip:<IPv4>` or `ip6:<first four groups>::/64`. */
export function bucketKeyFor(caller: Caller): string {
  if (caller.keyId !== null) return 'key:' + caller.keyId;
  const ip = caller.ip;
  if (ip === null || ip === '') return UNKNOWN_IP_BUCKET;
  // Hot path: plain IPv4 text is already canonical (it comes from the socket or a trusted proxy).
  if (ip.indexOf(':') < 0) return 'ip:' + ip;
  return ipv6BucketKey(ip);
}

/** Bucket key of IPv6 text: IPv4 inside IPv6 (net/ip.ts embeddedIPv4Words) counts as that IPv4, others by /64. */
export function ipv6BucketKey(ip: string): string {
  // A zone id (fe80::1%eth0) does not change who the caller is.
  const pct = ip.indexOf('%');
  const text = pct < 0 ? ip : ip.slice(0, pct);
  if (!parseIPv6Groups(text, groups)) return 'ip:' + ip; // unparseable: still its own bucket, never shared
  const v4 = embeddedIPv4Words(((groups[0] << 16) | groups[1]) >>> 0, ((groups[2] << 16) | groups[3]) >>> 0, ((groups[4] << 16) | groups[5]) >>> 0, ((groups[6] << 16) | groups[7]) >>> 0);
  if (v4 >= 0) return 'ip:' + formatIPv4(v4);
  return `ip6:${groups[0].toString(16)}:${groups[1].toString(16)}:${groups[2].toString(16)}:${groups[3].toString(16)}::/64`;
}
