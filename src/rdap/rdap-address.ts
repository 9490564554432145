/**
 * Lenient parsing of the address text registries put in `startAddress` /
 * `endAddress`: ARIN once zero-padded IPv4 ("074.125.000.000") and RIPE once
 * appended a host length ("62.239.237.0/32"). Pure.
 */
import { parseIp, type ParsedIp } from '../net/ip.ts';

/** Parses an RDAP start/end address; null when it is not an address even after the known quirks are undone. */
export function parseRdapAddress(text: unknown): ParsedIp | null {
  if (typeof text !== 'string') return null;
  let s = text.trim();
  const slash = s.indexOf('/');
  if (slash >= 0) s = s.slice(0, slash);
  if (!s.includes(':')) {
    const octets = s.split('.');
    // Zero padding is not octal here: registries pad decimal octets to three digits.
    if (octets.length === 4 && octets.every((o) => /^\d{1,3}$/.test(o))) s = octets.map((o) => String(Number(o))).join('.');
  }
  return parseIp(s);
}
