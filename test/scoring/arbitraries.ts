/** fast-check generators of index records and scoring contexts. */
import fc from 'fast-check';
import { Flag, type IndexRecord, type NetworkType, type RpkiStatus } from '../../src/index/record.ts';
import { NETWORK_TYPE_CODES } from '../../src/index/format.ts';
import type { ScoringContext } from '../../src/scoring/types.ts';

const ALL_FLAGS = Object.values(Flag).reduce((a, b) => a | b, 0);
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });

export const recordArb: fc.Arbitrary<IndexRecord> = fc.record({
  flags: fc.integer({ min: 0, max: ALL_FLAGS }),
  geo: nullable(
    fc.record({
      countryCode: nullable(fc.constantFrom('US', 'DE', 'JP')),
      region: nullable(fc.string()),
      city: nullable(fc.string()),
      postalCode: nullable(fc.string()),
      latitude: nullable(fc.double({ min: -90, max: 90, noNaN: true })),
      longitude: nullable(fc.double({ min: -180, max: 180, noNaN: true })),
      timezone: nullable(fc.constantFrom('UTC', 'Europe/Berlin')),
    }),
  ),
  asn: nullable(fc.record({ asn: fc.integer({ min: 1, max: 4294967295 }), name: nullable(fc.string()) })),
  allocation: nullable(
    fc.record({
      cidr: nullable(fc.constant('10.0.0.0/8')),
      range: fc.constant('10.0.0.0 - 10.255.255.255'),
      registry: fc.constantFrom('arin', 'ripencc'),
      countryCode: nullable(fc.constant('US')),
      status: fc.constantFrom('allocated', 'assigned'),
      date: nullable(fc.constant('2001-01-01')),
    }),
  ),
  route: nullable(
    fc.record({
      prefix: fc.constant('192.0.2.0/24'),
      originAsn: nullable(fc.integer({ min: 1, max: 65535 })),
      origins: fc.array(fc.integer({ min: 1, max: 65535 }), { maxLength: 3 }),
      rpkiStatus: fc.constantFrom<RpkiStatus>('valid', 'invalid', 'not_found', 'unknown'),
      originConflict: fc.boolean(),
    }),
  ),
  provider: nullable(
    fc.record({
      name: nullable(fc.constantFrom('Amazon Web Services', 'Cloudflare', 'Mullvad')),
      category: fc.constantFrom('datacenter', 'content', 'vpn', 'webhook'),
      service: nullable(fc.constantFrom('EC2', 'hooks')),
      region: nullable(fc.constant('us-east-1')),
    }),
  ),
  crawler: nullable(fc.constantFrom('googlebot', 'bingbot', 'gptbot')),
  specialUse: nullable(
    fc.record({
      name: fc.constant('Private-Use'),
      cidr: fc.constant('10.0.0.0/8'),
      rfc: fc.constant('RFC1918'),
      kind: fc.constantFrom('private', 'documentation', 'shared'),
      globallyReachable: fc.boolean(),
    }),
  ),
  threatList: nullable(fc.record({ list: fc.constant('spamhaus-drop'), reference: nullable(fc.constant('SBL1')) })),
  threatFeed: nullable(
    fc.record({
      malware: nullable(fc.constantFrom('Pikabot', 'QakBot')),
      firstSeen: nullable(fc.constant('2024-01-01T00:00:00Z')),
      lastSeen: nullable(fc.constant('2024-02-01')),
      port: nullable(fc.integer({ min: 1, max: 65535 })),
      status: nullable(fc.constantFrom('online', 'offline')),
    }),
  ),
  networkType: nullable(fc.constantFrom(...NETWORK_TYPE_CODES.filter((t): t is NetworkType => t !== null))),
});

export const ctxArb: fc.Arbitrary<ScoringContext> = fc.record({
  verifiedCrawler: nullable(fc.record({ key: fc.constantFrom('googlebot', 'bingbot'), hostname: fc.constant('crawl-1.googlebot.com') })),
});
