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
  /** Reply with these bytes instead (built from the query: see bloatedPtrReply). */
  raw?: (query: Buffer) => Buffer;
}

export interface DnsTestServer {
  /** `127.0.0.1:<port>`, the form IPINTEL_DNS_SERVERS takes. */
  address: string;
  /** Every question received, as `TYPE name`. */
  queries: string[];
  /** Sets the answer for `TYPE name` (e.g. `PTR 1.66.249.66.in-addr.arpa`). */
  set(type: string, name: string, entry: ZoneEntry): void;
  /** The answer to any question of `type` without its own entry (instead of NXDOMAIN). */
  setDefault(type: string, entry: ZoneEntry): void;
  close(): Promise<void>;
}

/** SOA minimum sent with negative answers (RFC 2308 negative TTL). */
export const NEGATIVE_TTL = 30;

const RCODE_BITS = { NOERROR: 0, NXDOMAIN: 3, SERVFAIL: 2 } as const;

/** Starts a responder on 127.0.0.1 with an ephemeral port. */
export async function startDnsTestServer(): Promise<DnsTestServer> {
  const zone = new Map<string, ZoneEntry>();
  const defaults = new Map<string, ZoneEntry>();
  const queries: string[] = [];
  const pending = new Set<ReturnType<typeof setTimeout>>();
  const socket = dgram.createSocket('udp4');

  // A client that went away before its reply makes the kernel report ECONNREFUSED here: not the server's failure.
  socket.on('error', () => {});
  socket.on('message', (msg, peer) => {
    const query = dnsPacket.decode(msg);
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    queries.push(`${question.type} ${name}`);
    const entry = zone.get(`${question.type} ${name}`) ?? defaults.get(question.type) ?? { rcode: 'NXDOMAIN' as const };
    if (entry.silent) return;
    if (entry.raw) {
      socket.send(entry.raw(msg), peer.port, peer.address);
      return;
    }
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
    setDefault(type, entry) {
      defaults.set(type, entry);
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

/** The question section's end in a query (after the name's zero byte, type and class). */
function questionEnd(query: Buffer): number {
  let at = 12;
  while (query[at] !== 0) at += 1 + query[at]!;
  return at + 1 + 4;
}

/**
 * A PTR reply of about `bytes` bytes made of compressed names, as a reverse
 * zone's owner can send: one 237-character base name written once, then as
 * many records as fit, each a short distinct label plus a pointer to the
 * base. Every name is a valid host name of 243 characters; a 64 KB reply
 * holds over 3 000 of them (some 790 000 characters once decoded).
 */
export function bloatedPtrReply(query: Buffer, bytes: number): Buffer {
  const qEnd = questionEnd(query);
  const base = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(40), 'test'];
  const baseRdata = Buffer.concat([...base.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])]);
  const parts: Buffer[] = [];
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // the id
  header.writeUInt16BE(0x8180, 2); // response, RD, RA, NOERROR
  header.writeUInt16BE(1, 4);
  parts.push(header, query.subarray(12, qEnd));
  let size = qEnd;
  const record = (rdata: Buffer) => {
    const fixed = Buffer.alloc(12);
    fixed.writeUInt16BE(0xc00c, 0); // owner: the question name
    fixed.writeUInt16BE(12, 2); // PTR
    fixed.writeUInt16BE(1, 4); // IN
    fixed.writeUInt32BE(3600, 6);
    fixed.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([fixed, rdata]);
  };
  const first = record(baseRdata);
  const baseOffset = size + 12;
  parts.push(first);
  size += first.length;
  let count = 1;
  for (;;) {
    const label = Buffer.from(`x${count.toString(36).padStart(4, '0')}`);
    const rdata = Buffer.concat([Buffer.from([label.length]), label, Buffer.from([0xc0 | (baseOffset >> 8), baseOffset & 0xff])]);
    if (size + 12 + rdata.length > bytes) break;
    const r = record(rdata);
    parts.push(r);
    size += r.length;
    count++;
  }
  header.writeUInt16BE(count, 6);
  return Buffer.concat(parts);
}
