/**
 * `tor-exits`: Tor exit addresses, as TorDNSEL `exit-addresses` (blocks of
 * `ExitNode`, `Published`, `LastStatus`, `ExitAddress <ip> <date>` lines) or
 * the bulk exit list (one address a line). Each address is reported once per
 * file as a single-address range.
 */
import type { FeedParser } from '../feed/source.ts';
import { parseIp } from '../../src/net/ip.ts';
import { failIfEmpty, quoted } from './cidr-list.ts';

/** exit-addresses keywords that carry no address. */
const INFO_KEYWORDS = new Set(['ExitNode', 'Published', 'LastStatus']);

/** Parses a `tor-exits` source. */
export const parse: FeedParser = async (ctx, sink) => {
  const seen = new Set<string>();
  for await (const [raw, lineNo] of ctx.lines()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const words = line.split(/\s+/);
    if (INFO_KEYWORDS.has(words[0])) {
      // The newest `Published`/`LastStatus` time is when the list was last confirmed.
      if (words[0] !== 'ExitNode' && words.length >= 3) ctx.reportDate(`${words[1]} ${words[2]}`);
      continue;
    }
    const ipText = words[0] === 'ExitAddress' ? words[1] ?? '' : words.length === 1 ? words[0] : undefined;
    const ip = ipText === undefined ? null : parseIp(ipText);
    if (!ip) {
      ctx.skip(lineNo, `not an exit address line: ${quoted(line)}`);
      continue;
    }
    const key = `${ip.family}:${ip.value}`;
    if (seen.has(key)) continue;
    seen.add(key);
    sink.torExit(ip.family, ip.value, ip.value);
    ctx.rows++;
  }
  failIfEmpty(ctx, 'exit addresses');
};
