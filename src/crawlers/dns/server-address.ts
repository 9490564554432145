/**
 * Parses IPINTEL_DNS_SERVERS entries: `1.2.3.4:53`, `[2001:db8::1]:53`,
 * or a bare address (port 53). Names are refused: the resolver's own
 * address must not need resolving.
 */
import { parseIp } from '../../net/ip.ts';

export interface DnsServerAddress {
  host: string;
  port: number;
  family: 4 | 6;
}

/** Parses one `host:port` entry; throws an Error naming the bad entry. */
export function parseDnsServer(entry: string): DnsServerAddress {
  const text = entry.trim();
  let host = text;
  let portText = '53';
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1];
    portText = bracketed[2] ?? '53';
  } else if (text.split(':').length === 2) {
    [host, portText] = text.split(':');
  }
  const ip = parseIp(host);
  const port = Number(portText);
  if (!ip || !/^\d{1,5}$/.test(portText) || port < 1 || port > 65535) {
    throw new Error(`IPINTEL_DNS_SERVERS entry "${entry}" is not an IP address with an optional :port`);
  }
  return { host, port, family: ip.family };
}
