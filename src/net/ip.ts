/**
 * IP address text <-> numbers, shared by the index builder and the server.
 *
 * IPv4 addresses are plain numbers (0..2^32-1). IPv6 addresses are bigints in
 * the builder (clear arithmetic) and four u32 words on the lookup hot path
 * (no bigint allocation per request).
 *
 * Also the one answer to "is this address public / inside the network" for
 * anything the process connects to (addressRange).
 */

import ipaddr from 'ipaddr.js';

export type Family = 4 | 6;
/** An address value: number for IPv4, bigint for IPv6. */
export type Addr = number | bigint;

export const V4_MAX = 0xffffffff;
export const V6_MAX = (1n << 128n) - 1n;

/**
 * Parses dotted-quad IPv4 text strictly (four decimal octets, no leading
 * zeros, no shorthand); -1 when invalid. One pass over char codes: this runs
 * on every lookup.
 */
export function parseIPv4(s: string): number {
  // No default parameters here: JSC compiles a function with them much slower (BENCHMARKS.md, index lookup).
  return parseIPv4Range(s, 0, s.length);
}

/**
 * parseIPv4 over s[from, to) (the dotted tail of an IPv6 text). Octet by
 * octet, at most three digits each, rather than a loop testing every
 * character for a dot: fewer branches on the lookup path.
 */
export function parseIPv4Range(s: string, from: number, to: number): number {
  if (to - from < 7 || to - from > 15) return -1;
  let i = from;
  let value = 0;
  for (let k = 0; ; k++) {
    // i < to here: the length check and the dot test below keep it so.
    let n = s.charCodeAt(i++) - 48;
    if (n < 0 || n > 9) return -1;
    if (i < to) {
      const d = s.charCodeAt(i) - 48;
      if (d >= 0 && d <= 9) {
        // "01" is rejected: some parsers read a leading zero as octal.
        if (n === 0) return -1;
        n = n * 10 + d;
        i++;
        if (i < to) {
          const e = s.charCodeAt(i) - 48;
          if (e >= 0 && e <= 9) {
            n = n * 10 + e;
            i++;
            if (n > 255) return -1;
          }
        }
      }
    }
    value = value * 256 + n;
    if (k === 3) return i === to ? value : -1;
    if (i >= to - 1 || s.charCodeAt(i) !== 46) return -1;
    i++;
  }
}

/** Hex digit value of a char code below 256; -2 for ':', -3 for '.', -1 for anything else. */
const HEX_CLASS = (() => {
  const t = new Int8Array(256).fill(-1);
  for (let c = 0; c < 10; c++) t[48 + c] = c;
  for (let c = 0; c < 6; c++) t[97 + c] = t[65 + c] = 10 + c;
  t[58] = -2;
  t[46] = -3;
  return t;
})();

/**
 * Parses IPv6 text into 8 16-bit groups written to `out` (length >= 8).
 * Accepts `::` compression and a trailing dotted IPv4 part; rejects zone ids.
 * Returns false when invalid. One pass with a table for the character class
 * (branching on digit ranges mispredicted on every hex letter; BENCHMARKS.md,
 * index lookup).
 */
export function parseIPv6Groups(s: string, out: Uint16Array | number[]): boolean {
  const len = s.length;
  if (len < 2 || len > 45) return false;
  let gap = -1; // index in out where "::" sits
  let n = 0; // groups written
  let i = 0;
  if (s.charCodeAt(0) === 58) {
    if (s.charCodeAt(1) !== 58) return false;
    gap = 0;
    i = 2;
    if (len === 2) {
      for (let k = 0; k < 8; k++) out[k] = 0;
      return true;
    }
  }
  let v = 0;
  let digits = 0;
  let start = i; // first char of the current group
  for (; i < len; i++) {
    const c = s.charCodeAt(i);
    const d = c < 256 ? HEX_CLASS[c] : -1;
    if (d >= 0) {
      v = (v << 4) | d;
      digits++;
      continue;
    }
    if (d === -2) {
      if (digits === 0) {
        // An empty group: the second colon of "::" (a leading "::" was taken above).
        if (i !== start || gap >= 0 || n === 0) return false;
        gap = n;
        start = i + 1;
        continue;
      }
      if (digits > 4 || n === 8) return false;
      out[n++] = v;
      v = 0;
      digits = 0;
      start = i + 1;
      if (i + 1 === len) return false; // trailing single colon
      continue;
    }
    if (d === -3) {
      // Embedded IPv4: must be last and leave room for two groups.
      if (n > 6) return false;
      const v4 = parseIPv4Range(s, start, len);
      if (v4 < 0) return false;
      out[n++] = v4 >>> 16;
      out[n++] = v4 & 0xffff;
      digits = -1;
      break;
    }
    return false;
  }
  if (digits > 0) {
    if (digits > 4 || n === 8) return false;
    out[n++] = v;
  } else if (digits === 0 && !(gap === n && start === len)) {
    return false; // ends in an empty group that is not the tail of "::"
  }
  if (gap < 0) return n === 8;
  if (n === 8) return false; // "::" must stand for at least one group
  const tail = n - gap;
  for (let k = 7; k >= 8 - tail; k--) out[k] = out[k - (8 - n)];
  for (let k = gap; k < 8 - tail; k++) out[k] = 0;
  return true;
}

const scratchGroups = new Uint16Array(8);

/** Parses IPv6 text into a bigint, or null when invalid. */
export function parseIPv6(s: string): bigint | null {
  if (!parseIPv6Groups(s, scratchGroups)) return null;
  let v = 0n;
  for (let k = 0; k < 8; k++) v = (v << 16n) | BigInt(scratchGroups[k]);
  return v;
}

/** A parsed address: family plus value. */
export interface ParsedIp {
  family: Family;
  value: Addr;
}

/** Parses IPv4 or IPv6 text; null when invalid. */
export function parseIp(s: string): ParsedIp | null {
  if (s.includes(':')) {
    const v = parseIPv6(s);
    return v === null ? null : { family: 6, value: v };
  }
  const v = parseIPv4(s);
  return v < 0 ? null : { family: 4, value: v };
}

/** Formats an IPv4 number as dotted quad. */
export function formatIPv4(v: number): string {
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

/** Formats 8 IPv6 groups in RFC 5952 canonical form. */
export function formatIPv6Groups(g: ArrayLike<number>): string {
  // Longest run of zero groups (length >= 2) becomes "::"; first one on ties.
  let bestStart = -1;
  let bestLen = 0;
  for (let k = 0; k < 8; ) {
    if (g[k] !== 0) {
      k++;
      continue;
    }
    let e = k;
    while (e < 8 && g[e] === 0) e++;
    if (e - k > bestLen && e - k >= 2) {
      bestStart = k;
      bestLen = e - k;
    }
    k = e;
  }
  const parts: string[] = [];
  for (let k = 0; k < 8; k++) {
    if (k === bestStart) {
      parts.push(k === 0 ? ':' : '');
      k += bestLen - 1;
      if (k === 7) parts.push('');
      continue;
    }
    parts.push(g[k].toString(16));
  }
  return parts.join(':');
}

/** Formats an IPv6 bigint in RFC 5952 canonical form. */
export function formatIPv6(v: bigint): string {
  const g = new Array<number>(8);
  for (let k = 7; k >= 0; k--) {
    g[k] = Number(v & 0xffffn);
    v >>= 16n;
  }
  return formatIPv6Groups(g);
}

/** Formats an address of the given family. */
export function formatIp(family: Family, v: Addr): string {
  return family === 4 ? formatIPv4(v as number) : formatIPv6(v as bigint);
}

/** First and last address of a prefix. */
export function prefixRange(family: Family, base: Addr, len: number): { start: Addr; end: Addr } {
  if (family === 4) {
    const size = 2 ** (32 - len);
    const start = Math.floor((base as number) / size) * size;
    return { start, end: start + size - 1 };
  }
  const host = 128n - BigInt(len);
  const mask = (1n << host) - 1n;
  const start = (base as bigint) & ~mask & V6_MAX;
  return { start, end: start | mask };
}

/** A parsed CIDR (or a bare address as a host prefix). */
export interface Cidr {
  family: Family;
  start: Addr;
  end: Addr;
  len: number;
}

/**
 * Parses `a.b.c.d/n`, `x::/n`, or a bare address (host prefix). Host bits set
 * below the mask are tolerated and cleared (feeds do publish such prefixes).
 * Returns null when invalid.
 */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/');
  const addrText = slash < 0 ? text : text.slice(0, slash);
  const ip = parseIp(addrText);
  if (!ip) return null;
  const max = ip.family === 4 ? 32 : 128;
  let len = max;
  if (slash >= 0) {
    const lt = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(lt)) return null;
    len = Number(lt);
    if (len > max) return null;
  }
  const { start, end } = prefixRange(ip.family, ip.value, len);
  return { family: ip.family, start, end, len };
}

/** Canonical CIDR text of a prefix. */
export function formatCidr(family: Family, start: Addr, len: number): string {
  return `${formatIp(family, start)}/${len}`;
}

/** Splits an arbitrary inclusive range into the minimal list of CIDR prefixes. */
export function rangeToCidrs(family: Family, start: Addr, end: Addr): Array<{ start: Addr; len: number }> {
  const out: Array<{ start: Addr; len: number }> = [];
  if (family === 4) {
    let s = start as number;
    const e = end as number;
    while (s <= e) {
      let size = 1;
      let len = 32;
      // Grow while aligned and inside the range.
      while (len > 0 && s % (size * 2) === 0 && s + size * 2 - 1 <= e) {
        size *= 2;
        len--;
      }
      out.push({ start: s, len });
      s += size;
    }
    return out;
  }
  let s = start as bigint;
  const e = end as bigint;
  while (s <= e) {
    let size = 1n;
    let len = 128;
    while (len > 0 && s % (size * 2n) === 0n && s + size * 2n - 1n <= e) {
      size *= 2n;
      len--;
    }
    out.push({ start: s, len });
    s += size;
  }
  return out;
}

/**
 * The one rule for IPv4 written as IPv6, used by the index reader, the
 * crawler verifier, the RDAP client and the caller IP alike: an IPv4-mapped
 * (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d, except :: and ::1)
 * address stands for its IPv4 address. Over the four 32-bit words of an
 * IPv6 address (most significant first): the IPv4 number, or -1.
 */
export function embeddedIPv4Words(w0: number, w1: number, w2: number, w3: number): number {
  if (w0 !== 0 || w1 !== 0) return -1;
  return w2 === 0xffff || (w2 === 0 && w3 > 1) ? w3 : -1;
}

/** embeddedIPv4Words over an IPv6 bigint: its IPv4 number, or -1. */
export function embeddedIPv4(v: bigint): number {
  const hi = v >> 64n;
  return embeddedIPv4Words(Number(hi >> 32n), Number(hi & 0xffffffffn), Number((v >> 32n) & 0xffffffffn), Number(v & 0xffffffffn));
}

/** An address as the service answers for it: an IPv6 address with IPv4 inside (embeddedIPv4Words) is that IPv4 address. */
export function plainAddress(ip: ParsedIp): ParsedIp {
  if (ip.family === 4) return ip;
  const v4 = embeddedIPv4(ip.value as bigint);
  return v4 < 0 ? ip : { family: 4, value: v4 };
}

/** Canonical text of an address (dotted IPv4; RFC 5952 IPv6; IPv4 inside IPv6 as IPv4), or null when `text` is not one. */
export function canonicalAddress(text: string): string | null {
  const ip = parseIp(text);
  if (!ip) return null;
  const plain = plainAddress(ip);
  return formatIp(plain.family, plain.value);
}

/** The IPv6 address stored as four u32 words (most significant first) at word offset 4i of `words`. */
export function wordsToBigInt(words: Uint32Array, i: number): bigint {
  const b = i * 4;
  return (BigInt(words[b]) << 96n) | (BigInt(words[b + 1]) << 64n) | (BigInt(words[b + 2]) << 32n) | BigInt(words[b + 3]);
}

/** Ranges a plain-http pull may reach: the operator's own network. */
const INSIDE_RANGES: ReadonlySet<string> = new Set(['loopback', 'private', 'uniqueLocal']);

/**
 * The special-purpose range an address falls in, named as ipaddr.js names
 * them ('loopback', 'private', 'linkLocal', 'carrierGradeNat', 'rfc6052'
 * for NAT64, 'reserved' for documentation space...), 'unicast' when it is
 * in none (a public address), or null when `text` is not an address. The
 * text is parsed here (strictly: no octal, hex or short IPv4 forms, no zone
 * ids); ipaddr.js keeps the list of ranges. IPv4-mapped IPv6 is judged as
 * its IPv4 address; IPv4-compatible IPv6 (::a.b.c.d, deprecated) is
 * 'ipv4Compatible', neither public nor inside.
 */
export function addressRange(text: string): string | null {
  const ip = parseIp(text);
  if (!ip) return null;
  if (ip.family === 6) {
    const v = ip.value as bigint;
    const high = v >> 32n;
    if (high === 0xffffn) return ipv4Range(Number(v & 0xffffffffn));
    // :: and ::1 are the unspecified and loopback addresses, not IPv4 inside IPv6.
    if (high === 0n && v > 1n) return 'ipv4Compatible';
    const groups = new Array<number>(8);
    for (let k = 7, rest = v; k >= 0; k--, rest >>= 16n) groups[k] = Number(rest & 0xffffn);
    return new ipaddr.IPv6(groups).range();
  }
  return ipv4Range(ip.value as number);
}

function ipv4Range(v: number): string {
  return new ipaddr.IPv4([v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255]).range();
}

/** Whether an address is public unicast (addressRange 'unicast'): the only kind an address from outside may lead a connection to. */
export function isPublicAddress(text: string): boolean {
  return addressRange(text) === 'unicast';
}

/** Whether an address is inside the operator's network: loopback, private (RFC 1918) or unique-local. */
export function isInsideAddress(text: string): boolean {
  const range = addressRange(text);
  return range !== null && INSIDE_RANGES.has(range);
}
