/**
 * A real DNS server for tests: a UDP responder on 127.0.0.1 built on
 * dns-packet, answering from an in-memory zone that tests can change.
 * It can stay silent (to cause timeouts), delay replies, or fail.
 */
import dgram from 'node:dgram';
import * as dnsPacket from 'dns-packet';

export interface ZoneEntry {
  /** Record data (host name for PTR, address for A/AAAA) with TTL seconds. */
  records?: Array<{ data: string; ttl: number }>;
  /** Reply with this rcode and no records. */
  rcode?: 'NXDOMAIN' | 'SERVFAIL';
  /** Never reply (the client must time out). */
  silent?: boolean;
  /** Reply only after this many milliseconds. */
  delayMs?: number;
}

export interface DnsTestServer {
  /** `127.0.0.1:<port>`, the form IPINTEL_DNS_SERVERS takes. */
  address: string;
  /** Every question received, as `TYPE name`. */
  queries: string[];
  /** Sets the answer for `TYPE name` (e.g. `PTR 1.66.249.66.in-addr.arpa`). */
  set(type: string, name: string, entry: ZoneEntry): void;
  close(): Promise<void>;
}

/** SOA minimum sent with negative answers (RFC 2308 negative TTL). */
export const NEGATIVE_TTL = 30;

const RCODE_BITS = { NOERROR: 0, NXDOMAIN: 3, SERVFAIL: 2 } as const;

/** Starts a responder on 127.0.0.1 with an ephemeral port. */
export async function startDnsTestServer(): Promise<DnsTestServer> {
  const zone = new Map<string, ZoneEntry>();
  const queries: string[] = [];
  const pending = new Set<ReturnType<typeof setTimeout>>();
  const socket = dgram.createSocket('udp4');

  socket.on('message', (msg, peer) => {
    const query = dnsPacket.decode(msg);
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    queries.push(`${question.type} ${name}`);
    const entry = zone.get(`${question.type} ${name}`) ?? { rcode: 'NXDOMAIN' as const };
    if (entry.silent) return;
    const rcode = entry.rcode ?? 'NOERROR';
    const reply = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | RCODE_BITS[rcode],
      questions: [question],
      answers: (entry.records ?? []).map((r) => ({ type: question.type, class: 'IN', name: question.name, ttl: r.ttl, data: r.data }) as dnsPacket.Answer),
      authorities:
        rcode === 'NOERROR' && (entry.records ?? []).length > 0
          ? []
          : [
              {
                type: 'SOA',
                class: 'IN',
                name: 'test.',
                ttl: 3600,
                data: { mname: 'ns.test', rname: 'hostmaster.test', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: NEGATIVE_TTL },
              },
            ],
    });
    const send = () => socket.send(reply, peer.port, peer.address);
    if (entry.delayMs) {
      const timer = setTimeout(() => {
        pending.delete(timer);
        send();
      }, entry.delayMs);
      pending.add(timer);
    } else send();
  });

  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  return {
    address: `127.0.0.1:${port}`,
    queries,
    set(type, name, entry) {
      zone.set(`${type} ${name.toLowerCase().replace(/\.$/, '')}`, entry);
    },
    close() {
      for (const timer of pending) clearTimeout(timer);
      return new Promise((resolve) => socket.close(() => resolve()));
    },
  };
}

/** A clock tests move by hand. */
export function manualClock(start = 1_700_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}
