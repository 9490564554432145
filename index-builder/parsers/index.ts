/**
 * Manifest type -> parser module. Modules load on first use, so a build
 * only loads the parsers its manifest names.
 */
import type { FeedParser } from '../feed/source.ts';

type ParserModule = { parse: FeedParser };

// Static import() strings keep `bun build --compile` able to bundle every parser.
export const PARSERS: Record<string, () => Promise<ParserModule>> = {
  'geo-mmdb': () => import('./geo-mmdb.ts'),
  'geo-csv': () => import('./geo-csv.ts'),
  geofeed: () => import('./geofeed.ts'),
  'asn-csv': () => import('./asn-csv.ts'),
  'asn-info': () => import('./asn-info.ts'),
  'rir-delegated': () => import('./rir-delegated.ts'),
  pfx2as: () => import('./pfx2as.ts'),
  'ris-whois': () => import('./ris-whois.ts'),
  'rpki-vrps': () => import('./rpki-vrps.ts'),
  'crawler-ranges': () => import('./crawler-ranges.ts'),
  'cloud-aws': () => import('./cloud-aws.ts'),
  'cloud-gcp': () => import('./cloud-gcp.ts'),
  'cloud-azure': () => import('./cloud-azure.ts'),
  'cloud-oracle': () => import('./cloud-oracle.ts'),
  'cidr-list': () => import('./cidr-list.ts'),
  'provider-ranges': () => import('./provider-ranges.ts'),
  'asn-list': () => import('./asn-list.ts'),
  'tor-exits': () => import('./tor-exits.ts'),
  'icloud-relay': () => import('./icloud-relay.ts'),
  'spamhaus-drop': () => import('./spamhaus-drop.ts'),
  'spamhaus-asndrop': () => import('./spamhaus-asndrop.ts'),
  'threat-feed': () => import('./threat-feed.ts'),
  bogons: () => import('./bogons.ts'),
  'peeringdb-net': () => import('./peeringdb-net.ts'),
  overrides: () => import('./overrides.ts'),
};

/** Whether a manifest type has a parser. */
export function isKnownType(type: string): boolean {
  return Object.hasOwn(PARSERS, type);
}
