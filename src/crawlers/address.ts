/**
 * Address normalization shared by the verifier and the request reader. Pure.
 */
import { formatIp, parseIp, type ParsedIp } from '../net/ip.ts';

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) stands for its IPv4 address. */
export function unmapIp(ip: ParsedIp): ParsedIp {
  if (ip.family === 6 && (ip.value as bigint) >> 32n === 0xffffn) {
    return { family: 4, value: Number((ip.value as bigint) & 0xffffffffn) };
  }
  return ip;
}

/** Canonical text of an address (RFC 5952 for IPv6, IPv4 for mapped), or null when `text` is not one. */
export function canonicalAddress(text: string): string | null {
  const ip = parseIp(text);
  if (!ip) return null;
  const plain = unmapIp(ip);
  return formatIp(plain.family, plain.value);
}
