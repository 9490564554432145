/**
 * `icloud-relay`: Apple's iCloud Private Relay `egress-ip-ranges.csv`
 * (RFC 8805 geofeed: `prefix,country,region,city,` — no header), reported as
 * `privacy_relay` ranges of "iCloud Private Relay" with the region, plus the
 * location. A plain one-CIDR-a-line list (no commas) is accepted too and
 * gives ranges without location. `#` starts a comment (RFC 8805).
 */
import type { FeedParser } from '../feed/source.ts';
import { parseCidr } from '../../src/net/ip.ts';
import { failIfEmpty, quoted } from './cidr-list.ts';
import { cleanGeo } from './provider-formats/report.ts';

/** Operator name of the relay. */
export const ICLOUD_RELAY_PROVIDER = 'iCloud Private Relay';

/** Parses an `icloud-relay` source. */
export const parse: FeedParser = async (ctx, sink) => {
  for await (const [raw, lineNo] of ctx.lines()) {
    const hash = raw.indexOf('#');
    const line = (hash < 0 ? raw : raw.slice(0, hash)).trim();
    if (line === '') continue;
    const [prefix, country, region, city] = line.split(',').map((f) => f.trim());
    const cidr = parseCidr(prefix);
    if (!cidr) {
      ctx.skip(lineNo, `not a CIDR: ${quoted(prefix)}`);
      continue;
    }
    const geo = cleanGeo({ countryCode: country, region, city });
    sink.provider(cidr.family, cidr.start, cidr.end, {
      category: 'privacy_relay',
      provider: ICLOUD_RELAY_PROVIDER,
      ...(geo?.region ? { region: geo.region } : {}),
    });
    if (geo) sink.geo(cidr.family, cidr.start, cidr.end, geo);
    ctx.rows++;
  }
  failIfEmpty(ctx, 'relay ranges');
};
