/**
 * A DNS transport whose module loads on its first question: the UDP client
 * (node:dgram, dns-packet) and the system resolver (node:dns) cost every
 * worker thread CPU at start (BENCHMARKS.md, start-up), and a lookup asks
 * DNS only for an address in a DNS-verifiable crawler range.
 */
import { DnsFailure, type DnsTransport } from './types.ts';

/** A transport built by `load` on its first query; a load that fails is that query's DnsFailure ('network') and is tried again by the next. */
export function lazyTransport(load: () => Promise<DnsTransport>): DnsTransport {
  let loading: Promise<DnsTransport> | null = null;
  return {
    async query(name, type) {
      const pending = (loading ??= load());
      let transport: DnsTransport;
      try {
        transport = await pending;
      } catch (e) {
        if (loading === pending) loading = null;
        throw new DnsFailure('network', `DNS client not loaded: ${(e as Error).message}`);
      }
      return transport.query(name, type);
    },
  };
}
