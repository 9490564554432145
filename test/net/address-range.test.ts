/**
 * addressRange, isPublicAddress and isInsideAddress: the one "is this
 * address public / inside the network" check (issue 40), against each range
 * kind and against the two ipaddr.js-based copies it replaced.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { addressRange, isInsideAddress, isPublicAddress } from '../../src/net/ip.ts';

/** The redirect policy's old check (src/feeds/redirect-policy.ts before issue 40), kept as the reference. */
function oldIsPublic(address: string): boolean {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return false;
  }
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() === 'unicast';
}

/** The index pull's old check (src/index/pull/pull-url.ts before issue 40), kept as the reference. */
function oldIsInside(address: string): boolean {
  try {
    let parsed = ipaddr.parse(address);
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    return new Set(['loopback', 'private', 'uniqueLocal']).has(parsed.range());
  } catch {
    return false;
  }
}

/** [address, range]: one or more of every kind the check must tell apart. */
const KINDS: Array<[string, string | null]> = [
  // public
  ['8.8.8.8', 'unicast'],
  ['1.1.1.1', 'unicast'],
  ['2001:4860:4860::8888', 'unicast'],
  ['2a00:1450::1', 'unicast'],
  ['::ffff:8.8.8.8', 'unicast'],
  ['::ffff:808:808', 'unicast'],
  // loopback
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'loopback'],
  // private and unique-local
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['::ffff:10.0.0.1', 'private'],
  ['fc00::1', 'uniqueLocal'],
  ['fd00:ec2::254', 'uniqueLocal'],
  // link-local (the cloud metadata address among them)
  ['169.254.169.254', 'linkLocal'],
  ['::ffff:169.254.169.254', 'linkLocal'],
  ['fe80::1', 'linkLocal'],
  ['febf:ffff::1', 'linkLocal'],
  // CGNAT
  ['100.64.0.1', 'carrierGradeNat'],
  ['100.127.255.255', 'carrierGradeNat'],
  // multicast and broadcast
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  // unspecified
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  // documentation and other reserved space
  ['192.0.2.1', 'reserved'],
  ['198.51.100.7', 'reserved'],
  ['203.0.113.9', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['3fff::1', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.8', 'reserved'],
  ['198.18.0.1', 'reserved'],
  // NAT64 (well-known and local-use prefixes), other translation and tunnels
  ['64:ff9b::808:808', 'rfc6052'],
  ['64:ff9b::127.0.0.1', 'rfc6052'],
  ['64:ff9b:1::1', 'rfc6052'],
  ['::ffff:0:a00:1', 'rfc6145'],
  ['2002:c000:204::1', '6to4'],
  ['2001:0:4136:e378::1', 'teredo'],
  ['fec0::1', 'deprecatedSiteLocal'],
  ['100::1', 'discard'],
  // IPv4-compatible IPv6 (deprecated): neither public nor inside, whatever IPv4 it carries
  ['::127.0.0.1', 'ipv4Compatible'],
  ['::8.8.8.8', 'ipv4Compatible'],
  ['::2', 'ipv4Compatible'],
  // not an address: no octal, hex, short or zoned forms
  ['not-an-address', null],
  ['', null],
  ['127.1', null],
  ['0x7f.0.0.1', null],
  ['2130706433', null],
  ['010.0.0.1', null],
  ['fe80::1%eth0', null],
  ['[::1]', null],
];

const INSIDE = new Set(['loopback', 'private', 'uniqueLocal']);

describe('addressRange', () => {
  test('names the range of each kind of address (IPv4, IPv6, IPv4-mapped)', () => {
    for (const [a, range] of KINDS) expect({ a, range: addressRange(a) }).toEqual({ a, range });
  });

  test('isPublicAddress is true only for unicast, isInsideAddress only for loopback, private and unique-local', () => {
    for (const [a, range] of KINDS) {
      expect({ a, pub: isPublicAddress(a), inside: isInsideAddress(a) }).toEqual({ a, pub: range === 'unicast', inside: range !== null && INSIDE.has(range) });
    }
  });
});

/**
 * Where the one check differs from the old copies, and why: each difference
 * refuses what an old copy let through (everything from outside is hostile
 * until checked), never the other way round.
 */
const STRICTER: Record<string, string> = {
  '::127.0.0.1': 'IPv4-compatible: the redirect check called it public (ipaddr.js sees plain unicast)',
  '::8.8.8.8': 'IPv4-compatible: the redirect check called it public',
  '::2': 'IPv4-compatible (0.0.0.2): the redirect check called it public',
  '127.1': 'short IPv4 form: the pull check took it for loopback',
  '0x7f.0.0.1': 'hex IPv4 form: the pull check took it for loopback',
  '2130706433': 'a 32-bit number: the pull check took it for loopback',
  '010.0.0.1': 'octal IPv4 form (8.0.0.1 to ipaddr.js): the redirect check called it public',
};

describe('the old copies (feeds/redirect-policy.ts, index/pull/pull-url.ts) refuse nothing the one check lets through', () => {
  test('table: every case of both old copies, the same answer or a stricter one listed with its reason', () => {
    for (const [a] of KINDS) {
      const now = { a, pub: isPublicAddress(a), inside: isInsideAddress(a) };
      const before = { a, pub: oldIsPublic(a), inside: oldIsInside(a) };
      if (a in STRICTER) {
        // Stricter: nothing refused before is accepted now, and something accepted before is refused now.
        expect(now.pub && !before.pub).toBe(false);
        expect(now.inside && !before.inside).toBe(false);
        expect(now.pub !== before.pub || now.inside !== before.inside).toBe(true);
      } else expect(now).toEqual(before);
    }
  });

  test('the old tests\' cases: refused before, refused now', () => {
    // test/feeds/hostile-downloads.test.ts (redirects) and test/index/pull.test.ts (plain-http pulls).
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254', '::ffff:169.254.169.254', '2001:db8::1', '224.0.0.1', 'not-an-address']) {
      expect({ a, pub: oldIsPublic(a) }).toEqual({ a, pub: false });
      expect({ a, pub: isPublicAddress(a) }).toEqual({ a, pub: false });
    }
    for (const a of ['8.8.8.8', '169.254.169.254']) {
      expect({ a, inside: oldIsInside(a) }).toEqual({ a, inside: false });
      expect({ a, inside: isInsideAddress(a) }).toEqual({ a, inside: false });
    }
    for (const a of ['127.0.0.1', '10.1.2.3', 'fd00::1']) expect({ a, inside: isInsideAddress(a) }).toEqual({ a, inside: oldIsInside(a) });
  });

  test('generated IPv4 and IPv6 addresses: the same answers as both old copies (IPv4-compatible ones refused by both now)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4().map((v4) => `::ffff:${v4}`)), (a) => {
        const now = { pub: isPublicAddress(a), inside: isInsideAddress(a) };
        if (addressRange(a) === 'ipv4Compatible') expect(now).toEqual({ pub: false, inside: false });
        else expect(now).toEqual({ pub: oldIsPublic(a), inside: oldIsInside(a) });
      }),
      { numRuns: 5_000 },
    );
  });

  test('every address of the special ranges\' edges: the same answers as both old copies', () => {
    const edges = ['0.0.0.0', '0.255.255.255', '1.0.0.0', '9.255.255.255', '10.0.0.0', '10.255.255.255', '11.0.0.0', '100.63.255.255', '100.64.0.0', '100.128.0.0', '126.255.255.255', '128.0.0.0', '169.253.255.255', '169.255.0.0', '172.15.255.255', '172.32.0.0', '192.0.1.255', '192.0.3.0', '192.88.99.1', '192.167.255.255', '192.169.0.0', '198.17.255.255', '198.20.0.0', '223.255.255.255', '239.255.255.255', '254.255.255.255', 'fbff:ffff::', 'fe00::', 'fe7f:ffff::', 'fec0::', 'feff::', 'ff00::', '2001:1ff::1', '2001:200::1', '2001:db7:ffff::1', '2001:db9::1', '3ffe::1', '4000::1', '5f00::1', '::1:0:0:0', '::fffe:0:0', '::1:ffff:0:0'];
    for (const a of edges) expect({ a, pub: isPublicAddress(a), inside: isInsideAddress(a) }).toEqual({ a, pub: oldIsPublic(a), inside: oldIsInside(a) });
  });
});
