/**
 * The registry of evidence signals. Labels, categories, severities and
 * confidences are stable API (docs/signals.md lists them); weights feed the
 * risk score (docs/scoring.md).
 */
import type { EvidenceKind } from '../index/evidence-kinds.ts';
import type { Level, Severity, SignalCategory } from './types.ts';

export interface SignalDefinition {
  label: string;
  category: SignalCategory;
  severity: Severity;
  confidence: Level;
  description: string;
  /** Risk points the signal adds (negative: lowers risk). */
  weight: number;
  /**
   * The evidence kind the signal is read from: not raised when the index does
   * not hold it, weighed less when it is stale. null: the service's own data
   * (IANA registries built in, live DNS), always held and never stale.
   */
  kind: EvidenceKind | null;
}

/** Every signal the service can raise, keyed by label. */
export const SIGNALS = {
  tor_exit: {
    label: 'tor_exit',
    kind: 'tor',
    category: 'anonymity',
    severity: 'high',
    confidence: 'high',
    description: 'Address is a published Tor exit relay',
    weight: 45,
  },
  vpn_range: {
    label: 'vpn_range',
    kind: 'vpn',
    category: 'anonymity',
    severity: 'medium',
    confidence: 'high',
    description: 'Address is in a published VPN provider range',
    weight: 25,
  },
  vpn_network: {
    label: 'vpn_network',
    kind: 'vpn',
    category: 'anonymity',
    severity: 'low',
    confidence: 'medium',
    description: 'Network is operated by a VPN provider (ASN-level match)',
    weight: 18,
  },
  proxy_range: {
    label: 'proxy_range',
    kind: 'proxy',
    category: 'anonymity',
    severity: 'medium',
    confidence: 'medium',
    description: 'Address is in a listed proxy range',
    weight: 30,
  },
  privacy_relay_egress: {
    label: 'privacy_relay_egress',
    kind: 'relays',
    category: 'privacy',
    severity: 'low',
    confidence: 'high',
    description: 'Shared egress of a privacy relay service used by many ordinary users',
    weight: 12,
  },
  datacenter_range: {
    label: 'datacenter_range',
    kind: 'datacenter',
    category: 'infrastructure',
    severity: 'low',
    confidence: 'high',
    description: 'Address is in a published cloud or hosting range',
    weight: 15,
  },
  hosting_network: {
    label: 'hosting_network',
    kind: 'datacenter',
    category: 'infrastructure',
    severity: 'low',
    confidence: 'medium',
    description: 'Network is operated by a hosting provider (ASN-level match)',
    weight: 8,
  },
  content_delivery_network: {
    label: 'content_delivery_network',
    kind: 'datacenter',
    category: 'infrastructure',
    severity: 'info',
    confidence: 'high',
    description: 'Address belongs to content delivery or edge infrastructure',
    weight: 5,
  },
  network_service_provider: {
    label: 'network_service_provider',
    kind: 'datacenter',
    category: 'infrastructure',
    severity: 'info',
    confidence: 'high',
    description: 'Address belongs to a network security or access service provider',
    weight: 5,
  },
  webhook_infrastructure: {
    label: 'webhook_infrastructure',
    kind: 'datacenter',
    category: 'infrastructure',
    severity: 'info',
    confidence: 'high',
    description: 'Provider-declared webhook or integration egress',
    weight: 0,
  },
  messaging_infrastructure: {
    label: 'messaging_infrastructure',
    kind: 'datacenter',
    category: 'infrastructure',
    severity: 'info',
    confidence: 'high',
    description: 'Provider-declared messaging or mail infrastructure',
    weight: 0,
  },
  mobile_network: {
    label: 'mobile_network',
    kind: 'network_type',
    category: 'network',
    severity: 'info',
    confidence: 'medium',
    description: 'Mobile carrier network; addresses are often shared behind carrier NAT',
    weight: 0,
  },
  hijacked_netblock: {
    label: 'hijacked_netblock',
    kind: 'threat',
    category: 'threat',
    severity: 'high',
    confidence: 'high',
    description: 'Netblock is listed as hijacked or operated by criminals (do-not-route list)',
    weight: 70,
  },
  threat_list_hit: {
    label: 'threat_list_hit',
    kind: 'threat',
    category: 'threat',
    severity: 'high',
    confidence: 'medium',
    description: 'Address is on a threat intelligence blocklist',
    weight: 50,
  },
  asn_drop_listed: {
    label: 'asn_drop_listed',
    kind: 'threat',
    category: 'threat',
    severity: 'low',
    confidence: 'medium',
    description: 'Announcing network is on a do-not-route ASN list (context only, not scored)',
    weight: 0,
  },
  bogon_address: {
    label: 'bogon_address',
    kind: 'bogons',
    category: 'address',
    severity: 'high',
    confidence: 'high',
    description: 'Address is unallocated or reserved space that should not appear on the Internet',
    weight: 60,
  },
  special_use_address: {
    label: 'special_use_address',
    kind: null,
    category: 'address',
    severity: 'high',
    confidence: 'high',
    description: 'Address is in a special-purpose block that is not globally reachable',
    weight: 60,
  },
  special_use_global: {
    label: 'special_use_global',
    kind: null,
    category: 'address',
    severity: 'info',
    confidence: 'high',
    description: 'Address is in a globally reachable special-purpose block',
    weight: 0,
  },
  rpki_invalid: {
    label: 'rpki_invalid',
    kind: 'rpki',
    category: 'routing',
    severity: 'medium',
    confidence: 'high',
    description: 'Announced route is RPKI-invalid for its origin',
    weight: 20,
  },
  origin_conflict: {
    label: 'origin_conflict',
    kind: 'routing',
    category: 'routing',
    severity: 'low',
    confidence: 'medium',
    description: 'Prefix is announced by more than one origin network',
    weight: 8,
  },
  unrouted_address: {
    label: 'unrouted_address',
    kind: 'routing',
    category: 'routing',
    severity: 'low',
    confidence: 'low',
    description: 'No announced route covers the address in the routing snapshot',
    weight: 5,
  },
  known_crawler_range: {
    label: 'known_crawler_range',
    kind: 'crawlers',
    category: 'crawler',
    severity: 'info',
    confidence: 'high',
    description: 'Address is in an official crawler range published by its operator',
    // Offsets the infrastructure signals every crawler range also carries (crawlers run in datacenters).
    weight: -15,
  },
  operator_override: {
    label: 'operator_override',
    kind: null,
    category: 'network',
    severity: 'info',
    confidence: 'high',
    // Raised with the override's note as its description; its risk adjustment is scored apart (score.ts).
    description: 'The operator of this service overrides what the feeds say about this range',
    weight: 0,
  },
  verified_crawler: {
    label: 'verified_crawler',
    kind: null,
    category: 'crawler',
    severity: 'info',
    confidence: 'high',
    description: 'Reverse and forward DNS confirm the address belongs to a known crawler',
    weight: -10,
  },
} as const satisfies Record<string, SignalDefinition>;

export type SignalLabel = keyof typeof SIGNALS;

/** Every registered label, in registry order. */
export const SIGNAL_LABELS = Object.keys(SIGNALS) as SignalLabel[];

/** Whether a label is in the registry. */
export function isSignalLabel(label: string): label is SignalLabel {
  return Object.hasOwn(SIGNALS, label);
}

/**
 * Per-category bounds on the summed weights, so stacked signals of one kind
 * (e.g. a DROP block that is also on another threat list) cannot dominate.
 */
export const CATEGORY_CAPS: Readonly<Record<SignalCategory, { max: number; min: number }>> = {
  anonymity: { max: 50, min: 0 },
  privacy: { max: 15, min: 0 },
  infrastructure: { max: 20, min: 0 },
  threat: { max: 80, min: 0 },
  routing: { max: 25, min: 0 },
  address: { max: 70, min: 0 },
  crawler: { max: 0, min: -25 },
  network: { max: 0, min: 0 },
};

/** A stale kind's signals count for this share of their weight (rounded toward zero). */
export const STALE_WEIGHT_FACTOR = 0.5;

/** Risk before any signal: an ordinary routed address is not risk-free. */
export const BASE_RISK = 10;
