/**
 * The caller's IP: the socket address, or the client named by
 * X-Forwarded-For / Forwarded when the peer is a trusted proxy
 * (IPINTEL_TRUST_PROXY: CIDRs or `loopback`). Walking from the right, the
 * first address that is not a trusted proxy is the client.
 */
import { formatIp, parseCidr, parseIp, embeddedIPv4, type Addr, type Cidr } from '../net/ip.ts';

/** Parsed trusted-proxy list. */
export class TrustedProxies {
  private readonly cidrs: Cidr[];

  constructor(entries: readonly string[]) {
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
    const p = normalize(ip);
    if (!p) return false;
    return this.cidrs.some((c) => c.family === p.family && p.value >= c.start && p.value <= c.end);
  }
}

/** Parses an address, unwrapping IPv4-mapped IPv6 to IPv4. */
function normalize(ip: string): { family: 4 | 6; value: Addr } | null {
  const p = parseIp(ip);
  if (!p) return null;
  if (p.family === 6) {
    const v4 = embeddedIPv4(p.value as bigint);
    if (v4 >= 0 && (p.value as bigint) >> 32n === 0xffffn) return { family: 4, value: v4 };
  }
  return p;
}

/** Canonical text of an address (IPv4-mapped shown as IPv4), or null when invalid. */
export function canonicalIp(ip: string): string | null {
  const p = normalize(ip);
  return p ? formatIp(p.family, p.value) : null;
}

/** Strips port and brackets from a forwarded node (`[2001:db8::1]:443`, `1.2.3.4:80`, `"…"`). */
function nodeAddress(node: string): string {
  let n = node.trim().replace(/^"|"$/g, '');
  if (n.startsWith('[')) return n.slice(1, n.indexOf(']') > 0 ? n.indexOf(']') : undefined);
  const colons = n.split(':').length - 1;
  if (colons === 1) n = n.slice(0, n.indexOf(':'));
  return n;
}

/** Addresses named by the forwarding headers, nearest proxy last. */
function forwardedChain(headers: Headers): string[] {
  const fwd = headers.get('forwarded');
  if (fwd) {
    const out: string[] = [];
    for (const element of fwd.split(',')) {
      for (const pair of element.split(';')) {
        const eq = pair.indexOf('=');
        if (eq > 0 && pair.slice(0, eq).trim().toLowerCase() === 'for') out.push(nodeAddress(pair.slice(eq + 1)));
      }
    }
    if (out.length) return out;
  }
  const xff = headers.get('x-forwarded-for');
  return xff ? xff.split(',').map((s) => nodeAddress(s)).filter(Boolean) : [];
}

/** The caller IP for a request given its socket address; null when none can be determined. */
export function clientIp(socketAddress: string | null | undefined, headers: Headers, trusted: TrustedProxies): string | null {
  const peer = socketAddress ? canonicalIp(socketAddress) : null;
  if (!peer) return null;
  if (trusted.empty || !trusted.trusts(peer)) return peer;
  const chain = forwardedChain(headers);
  for (let i = chain.length - 1; i >= 0; i--) {
    const ip = canonicalIp(chain[i]);
    if (!ip) return null; // a garbled hop: do not guess past it
    if (!trusted.trusts(ip)) return ip;
  }
  // Every hop is a trusted proxy: the leftmost is the best we know.
  return chain.length ? canonicalIp(chain[0]) : peer;
}
