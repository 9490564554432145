/**
 * Which bucket a request drains: the API key for keyed calls, the caller's
 * address for anonymous ones. IPv6 callers share one bucket per /64 because
 * a single host (or LAN) is routinely handed a whole /64 and could otherwise
 * rotate through 2^64 fresh buckets.
 *
 * The limiter takes an anonymous IPv4 caller's bucket as a number (the
 * address as a signed 32-bit integer, `BucketKey`): no key text is made,
 * hashed or kept per request, so a flood of distinct IPv4 callers leaves no
 * strings for the collector. Everything else, and anything shown to a person
 * or sent to Redis, is the text form (`bucketKeyFor`).
 */
import type { Caller } from '../caller.ts';
import { embeddedIPv4Words, formatIPv4, parseIPv4, parseIPv6Groups } from '../../net/ip.ts';

/** Bucket used for anonymous calls whose IP could not be determined (they share one). */
export const UNKNOWN_IP_BUCKET = 'ip:unknown';

/** A bucket as the limiter's stores take it: its text, or an IPv4 address as a signed 32-bit integer (`ip:<IPv4>`). */
export type BucketKey = string | number;

const groups = new Uint16Array(8);

/** The bucket of a caller as the limiter takes it: `key:<id>`, an IPv4 caller's address as a number, or the text of `bucketKeyFor`. */
export function limiterKeyFor(caller: Caller): BucketKey {
  if (caller.keyId !== null) return 'key:' + caller.keyId;
  const ip = caller.ip;
  if (ip === null || ip === '') return UNKNOWN_IP_BUCKET;
  // Hot path: plain IPv4 text (from the socket or a trusted proxy's header).
  if (ip.indexOf(':') < 0) {
    const v4 = parseIPv4(ip);
    return v4 >= 0 ? v4 | 0 : 'ip:' + ip;
  }
  return ipv6BucketKey(ip);
}

/** The bucket key of a caller as text: `key:<id>`, `ip:<IPv4>` or `ip6:<first four groups>::/64`. */
export function bucketKeyFor(caller: Caller): string {
  return bucketKeyText(limiterKeyFor(caller));
}

/** The text of a bucket key (`ip:<IPv4>` for a numeric one). */
export function bucketKeyText(key: BucketKey): string {
  return typeof key === 'number' ? 'ip:' + formatIPv4(key >>> 0) : key;
}

/** Bucket key of IPv6 text: IPv4 inside IPv6 (net/ip.ts embeddedIPv4Words) counts as that IPv4 (a number), others by /64. */
export function ipv6BucketKey(ip: string): BucketKey {
  // A zone id (fe80::1%eth0) does not change who the caller is.
  const pct = ip.indexOf('%');
  const text = pct < 0 ? ip : ip.slice(0, pct);
  if (!parseIPv6Groups(text, groups)) return 'ip:' + ip; // unparseable: still its own bucket, never shared
  const v4 = embeddedIPv4Words(((groups[0] << 16) | groups[1]) >>> 0, ((groups[2] << 16) | groups[3]) >>> 0, ((groups[4] << 16) | groups[5]) >>> 0, ((groups[6] << 16) | groups[7]) >>> 0);
  if (v4 >= 0) return v4 | 0;
  return `ip6:${groups[0].toString(16)}:${groups[1].toString(16)}:${groups[2].toString(16)}:${groups[3].toString(16)}::/64`;
}
