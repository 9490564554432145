/**
 * Reverse-lookup names (RFC 1035 in-addr.arpa, RFC 3596 ip6.arpa), pure.
 */
import type { ParsedIp } from '../../net/ip.ts';

/** The PTR question name of an address: `4.3.2.1.in-addr.arpa` or the ip6.arpa nibble form. */
export function reverseName(ip: ParsedIp): string {
  if (ip.family === 4) {
    const v = ip.value as number;
    return `${v & 255}.${(v >>> 8) & 255}.${(v >>> 16) & 255}.${v >>> 24}.in-addr.arpa`;
  }
  const hex = (ip.value as bigint).toString(16).padStart(32, '0');
  return hex.split('').reverse().join('.') + '.ip6.arpa';
}
