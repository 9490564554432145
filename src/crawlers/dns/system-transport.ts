/**
 * Fallback transport over the system resolver (`node:dns`), used when
 * IPINTEL_DNS_SERVERS is unset. The system API gives no TTL for PTR
 * answers nor for negative answers, so fixed lifetimes stand in for them.
 */
import { promises as nodeDns } from 'node:dns';
import { canonicalAddress } from '../../net/ip.ts';
import { normalizeHostname } from '../matching.ts';
import { isHostName, MAX_FORWARD_ADDRESSES, MAX_PTR_NAMES } from './answer-bounds.ts';
import { DnsFailure, type DnsAnswer, type DnsTransport, type QueryType } from './types.ts';

/** PTR records carry no TTL through node:dns; five minutes is a common PTR TTL. */
const PTR_TTL_SECONDS = 300;

const NEGATIVE_CODES = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'NODATA']);

/** Races a promise against a timer so a stuck system lookup cannot hold a request. */
function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DnsFailure('timeout', `${what} took longer than ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function ask(resolver: nodeDns.Resolver, name: string, type: QueryType): Promise<DnsAnswer> {
  if (type === 'PTR') {
    const names = [...new Set((await resolver.resolvePtr(name)).map(normalizeHostname).filter(isHostName))].slice(0, MAX_PTR_NAMES);
    return names.length ? { kind: 'records', values: names, ttl: PTR_TTL_SECONDS } : { kind: 'negative', rcode: 'NODATA', ttl: null };
  }
  const records = type === 'A' ? await resolver.resolve4(name, { ttl: true }) : await resolver.resolve6(name, { ttl: true });
  const values = [...new Set(records.map((r) => canonicalAddress(r.address)).filter((v): v is string => v !== null))].slice(0, MAX_FORWARD_ADDRESSES);
  if (values.length === 0) return { kind: 'negative', rcode: 'NODATA', ttl: null };
  return { kind: 'records', values, ttl: Math.min(...records.map((r) => r.ttl)) };
}

/** A transport over the operating system's configured resolver. */
export function createSystemTransport(timeoutMs: number): DnsTransport {
  const resolver = new nodeDns.Resolver({ timeout: timeoutMs, tries: 1 });
  return {
    async query(name, type) {
      try {
        return await withTimeout(ask(resolver, name, type), timeoutMs, `${type} ${name}`);
      } catch (err) {
        if (err instanceof DnsFailure) throw err;
        const code = (err as { code?: string }).code ?? '';
        if (NEGATIVE_CODES.has(code)) return { kind: 'negative', rcode: code === 'ENODATA' || code === 'NODATA' ? 'NODATA' : 'NXDOMAIN', ttl: null };
        throw new DnsFailure(code === 'ETIMEOUT' ? 'timeout' : 'server_failure', `${type} ${name}: ${code || String(err)}`);
      }
    },
  };
}
