/**
 * The crawler verifier: wires the registry, the cached DNS resolver and
 * the decision together, and keeps a cache of caller-independent DNS
 * proofs for GET lookups.
 */
import type { LookupHit } from '../index/record.ts';
import { formatIp, parseIp, plainAddress, type ParsedIp } from '../net/ip.ts';
import { checkReverseForwardDns, chooseFamily, type DnsCheck } from './dns-proof.ts';
import { decideVerification, type CrawlerVerification } from './decision.ts';
import { familiesClaimedBy, familiesForHostname } from './matching.ts';
import { crawlerFamily, type CrawlerFamily } from './registry.ts';
import { createCachingResolver, DEFAULT_DNS_CACHE_BYTES } from './dns/caching-resolver.ts';
import { parseDnsServer } from './dns/server-address.ts';
import { TtlCache } from '../cache/ttl-cache.ts';
import type { DnsTransport } from './dns/types.ts';
import { lazyTransport } from './dns/lazy-transport.ts';
import { DNS_CACHE_SIZE } from './cache-sizes.ts';

/** A proof is re-checked at least daily, whatever TTL the zone publishes. */
const MAX_PROOF_TTL_SECONDS = 86_400;

/** A caller-independent proof that an address is a given crawler. */
export interface CrawlerProof {
  key: string;
  hostname: string;
  verifiedBy: 'reverse_forward_dns';
}

export interface CrawlerVerifierOptions {
  /** `host:port` list (IPINTEL_DNS_SERVERS), tried in order; empty: the system resolver. */
  dnsServers: readonly string[];
  /** Per-query timeout, ms (per server for UDP). */
  timeoutMs?: number;
  /** Most DNS answers and proofs held, each (LRU). */
  cacheSize?: number;
  /** Most bytes DNS answers and proofs may take, each (estimated; LRU). */
  cacheBytes?: number;
  /** Milliseconds clock; injected for TTL tests. */
  now?: () => number;
  /** Replaces the DNS transport entirely (dnsServers is then ignored). */
  transport?: DnsTransport;
}

export interface VerifyInput {
  /** A valid address (IPv4-mapped IPv6 is checked as IPv4). */
  ip: string;
  userAgent: string | null;
  /** The index hit for the address, null when the index has none. */
  hit: LookupHit | null;
}

export interface CrawlerVerifier {
  /** Full verification for POST /v1/crawler/verify (may wait for DNS). */
  verify(input: VerifyInput): Promise<CrawlerVerification>;
  /** The cached DNS proof for an address, or null; never queries. */
  proofFor(address: string | LookupHit): CrawlerProof | null;
  /**
   * For GET lookups: the DNS proof of the hit's address (`hit.ip`, already
   * canonical: not parsed again) within `budgetMs`, or null. Only
   * addresses inside an official range of a DNS-verifiable family are
   * checked; a check still running after the budget goes on in the
   * background and fills the cache for later lookups. A value, not a
   * promise, when nothing is to be awaited (a cached proof, or a range no
   * DNS check applies to): the lookup then answers synchronously.
   */
  startProof(hit: LookupHit, budgetMs: number): CrawlerProof | null | Promise<CrawlerProof | null>;
}

/** Retained size of one cached proof (key, hostname and address text, plus overhead). */
function proofBytes(address: string, proof: CrawlerProof): number {
  return 160 + (address.length + proof.key.length + proof.hostname.length) * 2;
}

function parseOrThrow(text: string): ParsedIp {
  const ip = parseIp(text);
  if (!ip) throw new RangeError(`not an IP address: ${text}`);
  return plainAddress(ip);
}

/** DNS is pointless for private/reserved space: no public PTR can prove a crawler there. */
function dnsCanApply(hit: LookupHit | null): boolean {
  const special = hit?.record.specialUse;
  return !special || special.globallyReachable;
}

/** Whether an address of this hit is one a DNS check can prove: an official range of a DNS-verifiable family, publicly routable. */
function wantsProof(hit: LookupHit | null): boolean {
  return crawlerFamily(hit?.record.crawler)?.verification === 'reverse_forward_dns' && dnsCanApply(hit);
}


/** Builds a verifier from options (see CrawlerVerifierOptions). */
export function createCrawlerVerifier(options: CrawlerVerifierOptions): CrawlerVerifier {
  const timeoutMs = options.timeoutMs ?? 800;
  const cacheSize = options.cacheSize ?? DNS_CACHE_SIZE;
  const now = options.now ?? Date.now;
  // A bad server is refused here, at start, though the client loads on the first question.
  const servers = options.transport ? [] : options.dnsServers.map(parseDnsServer);
  const transport =
    options.transport ??
    (servers.length > 0
      ? lazyTransport(() => import('./dns/udp-transport.ts').then(({ createUdpTransport }) => createUdpTransport(servers, timeoutMs)))
      : lazyTransport(() => import('./dns/system-transport.ts').then(({ createSystemTransport }) => createSystemTransport(timeoutMs))));
  const resolver = createCachingResolver({ transport, cacheSize, now, cacheBytes: options.cacheBytes });
  const proofs = new TtlCache<CrawlerProof>(cacheSize, now, { maxBytes: options.cacheBytes ?? DEFAULT_DNS_CACHE_BYTES, sizeOf: proofBytes });
  const checksInFlight = new Map<string, Promise<DnsCheck>>();

  /** Runs (or joins) the DNS check of an address and records any proof. */
  function runCheck(ip: ParsedIp, rangeFamily: CrawlerFamily | null, preferredKeys: readonly string[]): Promise<DnsCheck> {
    const address = formatIp(ip.family, ip.value);
    const flightKey = `${address} ${preferredKeys.join(',')}`;
    const pending = checksInFlight.get(flightKey);
    if (pending) return pending;
    const check = checkReverseForwardDns(ip, resolver.resolve, preferredKeys)
      .then((result) => {
        if (result.outcome === 'proven') {
          // The cached proof must not depend on a caller's User-Agent: pick its family from the range only.
          const family = chooseFamily(familiesForHostname(result.hostname), rangeFamily ? [rangeFamily.key] : []);
          proofs.set(address, { key: family.key, hostname: result.hostname, verifiedBy: 'reverse_forward_dns' }, Math.min(result.ttlSeconds, MAX_PROOF_TTL_SECONDS) * 1000);
        }
        return result;
      })
      .finally(() => checksInFlight.delete(flightKey));
    checksInFlight.set(flightKey, check);
    return check;
  }

  return {
    async verify({ ip: text, userAgent, hit }) {
      const ip = parseOrThrow(text);
      const rangeFamily = crawlerFamily(hit?.record.crawler);
      // Range-and-UA families are decided without DNS; everything else may be proven by DNS alone.
      const wantsDns = rangeFamily?.verification !== 'ip_range_and_user_agent' && dnsCanApply(hit);
      const preferredKeys = [rangeFamily?.key, ...familiesClaimedBy(userAgent).map((f) => f.key)].filter(
        (k): k is string => typeof k === 'string',
      );
      const dns = wantsDns ? await runCheck(ip, rangeFamily, preferredKeys) : null;
      return decideVerification({ rangeFamily, userAgent, dns });
    },

    proofFor(address) {
      if (proofs.size === 0) return null; // the common case, checked on every lookup: no parse
      // A lookup hit is the parsed address: its canonical text is the key (IPv4 for mapped forms).
      if (typeof address !== 'string') return proofs.get(address.ip) ?? null;
      const ip = parseIp(address);
      if (!ip) return null;
      const plain = plainAddress(ip);
      return proofs.get(formatIp(plain.family, plain.value)) ?? null;
    },

    startProof(hit, budgetMs) {
      // The common case, on every lookup: no proof cached and a range no DNS check applies to.
      if (proofs.size === 0 && !wantsProof(hit)) return null;
      const cached = proofs.get(hit.ip);
      if (cached) return cached;
      if (!wantsProof(hit)) return null;
      return proveWithin(hit, budgetMs);
    },
  };

  /** Runs the DNS check of an address in a DNS-family range; null when it has not proven it within the budget. */
  async function proveWithin(hit: LookupHit, budgetMs: number): Promise<CrawlerProof | null> {
    const rangeFamily = crawlerFamily(hit.record.crawler)!;
    const check = runCheck(parseOrThrow(hit.ip), rangeFamily, [rangeFamily.key]).catch(() => null);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const budget = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), Math.max(0, budgetMs));
    });
    const result = await Promise.race([check, budget]).finally(() => clearTimeout(timer));
    return result?.outcome === 'proven' ? (proofs.get(hit.ip) ?? null) : null;
  }
}
