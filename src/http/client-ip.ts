/**
 * The caller's IP: the socket address, or the client named by ONE
 * forwarding header when the peer is a trusted proxy (IPINTEL_TRUST_PROXY:
 * CIDRs or `loopback`; IPINTEL_TRUST_PROXY_HEADER: `x-forwarded-for` by
 * default, or `forwarded`). Walking from the right, the first address that
 * is not a trusted proxy is the client. Reading both headers would let a
 * client pick its own IP through whichever one its proxy passes through.
 */
import type { TrustProxyHeader } from '../config.ts';
import { canonicalAddress, parseCidr, parseIp, parseIPv4, plainAddress, type Cidr } from '../net/ip.ts';

/** Parsed trusted-proxy list. */
export class TrustedProxies {
  private readonly cidrs: Cidr[];

  constructor(
    entries: readonly string[],
    /** The one header (lower case) the client is read from behind a trusted peer. */
    readonly header: TrustProxyHeader = 'x-forwarded-for',
  ) {
    this.cidrs = [];
    for (const e of entries) {
      if (e.toLowerCase() === 'loopback') {
        this.cidrs.push(parseCidr('127.0.0.0/8')!, parseCidr('::1/128')!);
        continue;
      }
      const c = parseCidr(e);
      if (!c) throw new Error(`IPINTEL_TRUST_PROXY: not a CIDR or "loopback": ${e}`);
      this.cidrs.push(c);
    }
  }

  get empty(): boolean {
    return this.cidrs.length === 0;
  }

  /** Whether an address text is inside a trusted range. */
  trusts(ip: string): boolean {
    const parsed = parseIp(ip);
    if (!parsed) return false;
    const p = plainAddress(parsed);
    return this.cidrs.some((c) => c.family === p.family && p.value >= c.start && p.value <= c.end);
  }

  /** Whether an IPv4 address (as a number) is inside a trusted range: `trusts` without a parse or an allocation. */
  trustsIPv4(v: number): boolean {
    const cidrs = this.cidrs;
    for (let i = 0; i < cidrs.length; i++) {
      const c = cidrs[i];
      if (c.family === 4 && v >= (c.start as number) && v <= (c.end as number)) return true;
    }
    return false;
  }
}

/** Strips port, brackets and quotes from a forwarded node (`[2001:db8::1]:443`, `1.2.3.4:80`, `"…"`). */
function nodeAddress(node: string): string {
  let n = node.trim().replace(/^"|"$/g, '');
  if (n.startsWith('[')) return n.slice(1, n.indexOf(']') > 0 ? n.indexOf(']') : undefined);
  const colons = n.split(':').length - 1;
  if (colons === 1) n = n.slice(0, n.indexOf(':'));
  return n;
}

/** The node of a `Forwarded` element's `for=` parameter, or null when the element has none. */
function forwardedFor(element: string): string | null {
  for (const pair of element.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim().toLowerCase() === 'for') return nodeAddress(pair.slice(eq + 1));
  }
  return null;
}

/**
 * Most hops walked from the right. A chain of more trusted proxies than this
 * is not believed (no caller IP), so a long header costs a bounded amount of work.
 */
export const MAX_FORWARDED_HOPS = 16;
/** Longest hop element read; a longer one is garbage (a Forwarded element with for, by, proto and host fits). */
export const MAX_HOP_CHARS = 256;

/**
 * The caller IP for a request given its socket address; null when none can
 * be determined. Behind a trusted peer only the configured header is read,
 * from the right, past trusted hops: the rest of it (and the other header)
 * was written by whoever sent the request.
 */
export function clientIp(socketAddress: string | null | undefined, headers: Headers, trusted: TrustedProxies): string | null {
  if (!socketAddress) return null;
  // Plain IPv4 text that parses is already canonical (parseIPv4 takes no leading zeros): no second parse, no new string.
  const peerV4 = parseIPv4(socketAddress);
  const peer = peerV4 >= 0 ? socketAddress : canonicalAddress(socketAddress);
  if (!peer) return null;
  if (trusted.empty || !(peerV4 >= 0 ? trusted.trustsIPv4(peerV4) : trusted.trusts(peer))) return peer;
  const value = headers.get(trusted.header);
  if (value === null) return peer;
  let end = value.length;
  let leftmost: string | null = null;
  for (let hop = 0; hop < MAX_FORWARDED_HOPS; hop++) {
    const comma = end > 0 ? value.lastIndexOf(',', end - 1) : -1;
    if (end - comma - 1 > MAX_HOP_CHARS) return null;
    const element = value.slice(comma + 1, end).trim();
    if (element !== '') {
      // A plain IPv4 hop is its own node and canonical form (as the peer above).
      const hopV4 = trusted.header === 'forwarded' ? -1 : parseIPv4(element);
      if (hopV4 >= 0) {
        if (!trusted.trustsIPv4(hopV4)) return element;
        leftmost = element;
      } else {
        const node = trusted.header === 'forwarded' ? forwardedFor(element) : nodeAddress(element);
        const ip = node === null ? null : canonicalAddress(node);
        if (!ip) return null; // a garbled hop: do not guess past it
        if (!trusted.trusts(ip)) return ip;
        leftmost = ip;
      }
    }
    if (comma < 0) return leftmost ?? peer; // every hop is a trusted proxy: the leftmost is the best we know
    end = comma;
  }
  return null;
}
