/**
 * A minimal UDP DNS client (RFC 1035) over `dns-packet`: one question per
 * datagram, servers tried in order, each with its own timeout.
 */
import dgram from 'node:dgram';
import * as dnsPacket from 'dns-packet';
import { canonicalAddress } from '../../net/ip.ts';
import { normalizeHostname } from '../matching.ts';
import { isHostName, keepBounded, MAX_FORWARD_ADDRESSES, MAX_PTR_NAMES, MAX_REPLY_BYTES } from './answer-bounds.ts';
import { DnsFailure, type DnsAnswer, type DnsTransport, type QueryType } from './types.ts';
import type { DnsServerAddress } from './server-address.ts';

const RCODE_NOERROR = 0;
const RCODE_NXDOMAIN = 3;

/** Sends one question to one server; resolves with the decoded reply or rejects (timeout, socket error). */
function exchange(server: DnsServerAddress, name: string, type: QueryType, timeoutMs: number): Promise<dnsPacket.DecodedPacket> {
  return new Promise((resolve, reject) => {
    // A random id and a fresh socket per query: replies are matched by id and question (spoofing resistance).
    // Web Crypto's CSPRNG: node:crypto is a costly module for every worker thread to load at start.
    const id = crypto.getRandomValues(new Uint16Array(1))[0];
    const socket = dgram.createSocket(server.family === 4 ? 'udp4' : 'udp6');
    let settled = false;
    const finish = (error: Error | null, packet?: dnsPacket.DecodedPacket) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.close();
      if (error) reject(error);
      else resolve(packet!);
    };
    const timer = setTimeout(
      () => finish(new DnsFailure('timeout', `no reply from ${server.host}:${server.port} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on('error', (err) => finish(new DnsFailure('network', `DNS socket error: ${err.message}`)));
    socket.on('message', (msg) => {
      if (msg.length > MAX_REPLY_BYTES) {
        // Never decoded: a reply of this size to our id is a refusal to answer within bounds; anything else is noise.
        if (msg.length >= 2 && msg.readUInt16BE(0) === id) finish(new DnsFailure('malformed', `reply of ${msg.length} bytes from ${server.host}:${server.port} is over ${MAX_REPLY_BYTES}`));
        return;
      }
      let packet: dnsPacket.DecodedPacket;
      try {
        packet = dnsPacket.decode(msg);
      } catch {
        // Undecodable (e.g. a name over 255 bytes): a refusal when it carries our id, else noise to wait past.
        if (msg.length >= 2 && msg.readUInt16BE(0) === id) finish(new DnsFailure('malformed', `undecodable reply from ${server.host}:${server.port}`));
        return;
      }
      const question = packet.questions?.[0];
      if (packet.id !== id || !question || normalizeHostname(question.name) !== normalizeHostname(name)) return;
      finish(null, packet);
    });
    const query = dnsPacket.encode({
      type: 'query',
      id,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ type, name, class: 'IN' }],
    });
    socket.send(query, server.port, server.host, (err) => {
      if (err) finish(new DnsFailure('network', `DNS send failed: ${err.message}`));
    });
  });
}

/** RFC 2308: a negative answer lives for min(SOA TTL, SOA minimum). */
function negativeTtl(packet: dnsPacket.DecodedPacket): number | null {
  for (const rr of packet.authorities ?? []) {
    if (rr.type === 'SOA') return Math.min(rr.ttl ?? 0, rr.data.minimum ?? 0);
  }
  return null;
}

/** Turns a reply into an answer; null for a server-side failure worth trying elsewhere. */
export function interpretReply(packet: dnsPacket.DecodedPacket, type: QueryType): DnsAnswer | null {
  const rcode = (packet.flags ?? 0) & 0xf;
  if (rcode === RCODE_NXDOMAIN) return { kind: 'negative', rcode: 'NXDOMAIN', ttl: negativeTtl(packet) };
  if (rcode !== RCODE_NOERROR) return null;
  const values: string[] = [];
  let ttl = Infinity;
  const max = type === 'PTR' ? MAX_PTR_NAMES : MAX_FORWARD_ADDRESSES;
  // Only records of the asked type count; CNAMEs on the way (RFC 2317 classless PTR) are followed by the server.
  // Only the first few valid values are kept (answer-bounds.ts): the rest of a large set is never stored.
  for (const rr of packet.answers ?? []) {
    if (rr.type !== type || typeof rr.data !== 'string') continue;
    const value = type === 'PTR' ? normalizeHostname(rr.data) : canonicalAddress(rr.data);
    if (!value || (type === 'PTR' && !isHostName(value))) continue;
    ttl = Math.min(ttl, rr.ttl ?? 0);
    if (!keepBounded(values, value, max)) break;
  }
  if (values.length === 0) return { kind: 'negative', rcode: 'NODATA', ttl: negativeTtl(packet) };
  return { kind: 'records', values, ttl };
}

/** A transport asking `servers` in order, each given `timeoutMs`. */
export function createUdpTransport(servers: readonly DnsServerAddress[], timeoutMs: number): DnsTransport {
  if (servers.length === 0) throw new Error('createUdpTransport needs at least one server');
  return {
    async query(name, type) {
      let lastFailure = new DnsFailure('timeout', 'no DNS server answered');
      for (const server of servers) {
        try {
          const packet = await exchange(server, name, type, timeoutMs);
          // A truncated reply is incomplete; PTR/A/AAAA answers fit in 512 bytes in practice, so treat it as a failure.
          const answer = packet.flag_tc ? null : interpretReply(packet, type);
          if (answer) return answer;
          lastFailure = new DnsFailure('server_failure', `${server.host}:${server.port} could not answer ${type} ${name}`);
        } catch (err) {
          lastFailure = err instanceof DnsFailure ? err : new DnsFailure('network', String(err));
        }
      }
      throw lastFailure;
    },
  };
}
