/**
 * IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and
 * successors), plus multicast, built in: these never change per request and
 * every build gets them. `kind` is the short machine value behind
 * `network.routability`; `global` is the registry's "Globally Reachable".
 */
export interface SpecialPurposeBlock {
  cidr: string;
  name: string;
  rfc: string;
  kind: string;
  global: boolean;
}

export const SPECIAL_PURPOSE_BLOCKS: readonly SpecialPurposeBlock[] = [
  // IPv4 special-purpose registry
  { cidr: '0.0.0.0/8', name: 'This network', rfc: 'RFC791', kind: 'reserved', global: false },
  { cidr: '0.0.0.0/32', name: 'This host on this network', rfc: 'RFC1122', kind: 'unspecified', global: false },
  { cidr: '10.0.0.0/8', name: 'Private-Use', rfc: 'RFC1918', kind: 'private', global: false },
  { cidr: '100.64.0.0/10', name: 'Shared Address Space', rfc: 'RFC6598', kind: 'shared', global: false },
  { cidr: '127.0.0.0/8', name: 'Loopback', rfc: 'RFC1122', kind: 'loopback', global: false },
  { cidr: '169.254.0.0/16', name: 'Link Local', rfc: 'RFC3927', kind: 'link_local', global: false },
  { cidr: '172.16.0.0/12', name: 'Private-Use', rfc: 'RFC1918', kind: 'private', global: false },
  { cidr: '192.0.0.0/24', name: 'IETF Protocol Assignments', rfc: 'RFC6890', kind: 'reserved', global: false },
  { cidr: '192.0.0.0/29', name: 'IPv4 Service Continuity Prefix', rfc: 'RFC7335', kind: 'reserved', global: false },
  { cidr: '192.0.0.8/32', name: 'IPv4 dummy address', rfc: 'RFC7600', kind: 'reserved', global: false },
  { cidr: '192.0.0.9/32', name: 'Port Control Protocol Anycast', rfc: 'RFC7723', kind: 'anycast', global: true },
  { cidr: '192.0.0.10/32', name: 'Traversal Using Relays around NAT Anycast', rfc: 'RFC8155', kind: 'anycast', global: true },
  { cidr: '192.0.0.170/31', name: 'NAT64/DNS64 Discovery', rfc: 'RFC7050', kind: 'reserved', global: false },
  { cidr: '192.0.2.0/24', name: 'Documentation (TEST-NET-1)', rfc: 'RFC5737', kind: 'documentation', global: false },
  { cidr: '192.31.196.0/24', name: 'AS112-v4', rfc: 'RFC7535', kind: 'anycast', global: true },
  { cidr: '192.52.193.0/24', name: 'AMT', rfc: 'RFC7450', kind: 'anycast', global: true },
  { cidr: '192.88.99.0/24', name: 'Deprecated (6to4 Relay Anycast)', rfc: 'RFC7526', kind: 'reserved', global: false },
  { cidr: '192.168.0.0/16', name: 'Private-Use', rfc: 'RFC1918', kind: 'private', global: false },
  { cidr: '192.175.48.0/24', name: 'Direct Delegation AS112 Service', rfc: 'RFC7534', kind: 'anycast', global: true },
  { cidr: '198.18.0.0/15', name: 'Benchmarking', rfc: 'RFC2544', kind: 'benchmarking', global: false },
  { cidr: '198.51.100.0/24', name: 'Documentation (TEST-NET-2)', rfc: 'RFC5737', kind: 'documentation', global: false },
  { cidr: '203.0.113.0/24', name: 'Documentation (TEST-NET-3)', rfc: 'RFC5737', kind: 'documentation', global: false },
  { cidr: '224.0.0.0/4', name: 'Multicast', rfc: 'RFC5771', kind: 'multicast', global: false },
  { cidr: '240.0.0.0/4', name: 'Reserved', rfc: 'RFC1112', kind: 'reserved', global: false },
  { cidr: '255.255.255.255/32', name: 'Limited Broadcast', rfc: 'RFC8190', kind: 'broadcast', global: false },
  // IPv6 special-purpose registry (::ffff:0:0/96 is answered from the IPv4 family)
  { cidr: '::/128', name: 'Unspecified Address', rfc: 'RFC4291', kind: 'unspecified', global: false },
  { cidr: '::1/128', name: 'Loopback Address', rfc: 'RFC4291', kind: 'loopback', global: false },
  { cidr: '64:ff9b::/96', name: 'IPv4-IPv6 Translation', rfc: 'RFC6052', kind: 'translation', global: true },
  { cidr: '64:ff9b:1::/48', name: 'IPv4-IPv6 Local-Use Translation', rfc: 'RFC8215', kind: 'translation', global: false },
  { cidr: '100::/64', name: 'Discard-Only Address Block', rfc: 'RFC6666', kind: 'discard', global: false },
  { cidr: '2001::/23', name: 'IETF Protocol Assignments', rfc: 'RFC2928', kind: 'reserved', global: false },
  { cidr: '2001::/32', name: 'TEREDO', rfc: 'RFC4380', kind: 'tunnel', global: false },
  { cidr: '2001:1::1/128', name: 'Port Control Protocol Anycast', rfc: 'RFC7723', kind: 'anycast', global: true },
  { cidr: '2001:1::2/128', name: 'Traversal Using Relays around NAT Anycast', rfc: 'RFC8155', kind: 'anycast', global: true },
  { cidr: '2001:2::/48', name: 'Benchmarking', rfc: 'RFC5180', kind: 'benchmarking', global: false },
  { cidr: '2001:3::/32', name: 'AMT', rfc: 'RFC7450', kind: 'anycast', global: true },
  { cidr: '2001:4:112::/48', name: 'AS112-v6', rfc: 'RFC7535', kind: 'anycast', global: true },
  { cidr: '2001:10::/28', name: 'Deprecated (previously ORCHID)', rfc: 'RFC4843', kind: 'reserved', global: false },
  { cidr: '2001:20::/28', name: 'ORCHIDv2', rfc: 'RFC7343', kind: 'reserved', global: true },
  { cidr: '2001:db8::/32', name: 'Documentation', rfc: 'RFC3849', kind: 'documentation', global: false },
  { cidr: '2002::/16', name: '6to4', rfc: 'RFC3056', kind: 'tunnel', global: false },
  { cidr: '2620:4f:8000::/48', name: 'Direct Delegation AS112 Service', rfc: 'RFC7534', kind: 'anycast', global: true },
  { cidr: '3fff::/20', name: 'Documentation', rfc: 'RFC9637', kind: 'documentation', global: false },
  { cidr: '5f00::/16', name: 'Segment Routing (SRv6) SIDs', rfc: 'RFC9602', kind: 'reserved', global: false },
  { cidr: 'fc00::/7', name: 'Unique-Local', rfc: 'RFC4193', kind: 'private', global: false },
  { cidr: 'fe80::/10', name: 'Link-Local Unicast', rfc: 'RFC4291', kind: 'link_local', global: false },
  { cidr: 'ff00::/8', name: 'Multicast', rfc: 'RFC4291', kind: 'multicast', global: false },
];
