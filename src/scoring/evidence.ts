/**
 * Evidence (spec 2.1 `evidence`): the registry's signals raised by rules
 * over the record, plus the threat-feed sidecar's metadata.
 */
import { Flag, type IndexRecord } from '../index/record.ts';
import { isNonRoutable } from './classify.ts';
import { SIGNALS, type SignalLabel } from './signals.ts';
import type { Classification, Evidence, Signal } from './types.ts';

/** One rule: when it holds, the signal with that label is raised. */
interface SignalRule {
  label: SignalLabel;
  holds(record: IndexRecord, classification: Classification): boolean;
}

const has = (mask: number) => (r: IndexRecord) => (r.flags & mask) !== 0;

/** Rules in the order signals are listed (strongest first within a kind). */
export const SIGNAL_RULES: readonly SignalRule[] = [
  { label: 'hijacked_netblock', holds: has(Flag.DROP) },
  // The threat-feed listing is itself the threat-list hit; its metadata adds nothing more.
  { label: 'threat_list_hit', holds: has(Flag.THREAT_LIST | Flag.THREAT_FEED) },
  { label: 'asn_drop_listed', holds: has(Flag.ASN_DROP) },
  { label: 'bogon_address', holds: has(Flag.BOGON) },
  { label: 'special_use_address', holds: (r) => !(r.flags & Flag.BOGON) && isNonRoutable(r) },
  { label: 'special_use_global', holds: (r) => r.specialUse !== null && r.specialUse.globallyReachable },
  { label: 'tor_exit', holds: has(Flag.TOR_EXIT) },
  { label: 'vpn_range', holds: has(Flag.VPN) },
  // The ASN-level match only counts when no range list already said so.
  { label: 'vpn_network', holds: (r) => (r.flags & (Flag.VPN_ASN | Flag.VPN)) === Flag.VPN_ASN },
  { label: 'proxy_range', holds: has(Flag.PROXY) },
  { label: 'privacy_relay_egress', holds: has(Flag.PRIVACY_RELAY) },
  { label: 'datacenter_range', holds: has(Flag.DATACENTER) },
  { label: 'hosting_network', holds: (r) => (r.flags & (Flag.DATACENTER_ASN | Flag.DATACENTER)) === Flag.DATACENTER_ASN },
  { label: 'content_delivery_network', holds: has(Flag.CONTENT) },
  { label: 'network_service_provider', holds: has(Flag.NETWORK_SERVICE_PROVIDER) },
  { label: 'webhook_infrastructure', holds: has(Flag.WEBHOOK) },
  { label: 'messaging_infrastructure', holds: has(Flag.MESSAGING) },
  { label: 'mobile_network', holds: has(Flag.MOBILE) },
  { label: 'rpki_invalid', holds: (r) => r.route?.rpkiStatus === 'invalid' },
  { label: 'origin_conflict', holds: (r) => r.route?.originConflict === true },
  // Only meaningful for routable space; a bogon is already explained by its own signal.
  { label: 'unrouted_address', holds: (r) => r.route === null && !isNonRoutable(r) },
  { label: 'known_crawler_range', holds: (_r, c) => c.is_known_crawler },
  { label: 'verified_crawler', holds: (_r, c) => c.is_verified_crawler },
];

// Signal objects are immutable and shared: building them per lookup would be waste.
const SIGNAL_OBJECTS = Object.fromEntries(
  Object.values(SIGNALS).map((d) => [
    d.label,
    Object.freeze({ category: d.category, label: d.label, severity: d.severity, confidence: d.confidence, description: d.description }),
  ]),
) as Record<SignalLabel, Signal>;

/** Spec 2.1 evidence of a record: raised signals and, when listed, threat-feed metadata. */
export function collectEvidence(record: IndexRecord, classification: Classification): Evidence {
  const signals: Signal[] = [];
  for (const rule of SIGNAL_RULES) {
    if (rule.holds(record, classification)) signals.push(SIGNAL_OBJECTS[rule.label]);
  }
  const evidence: Evidence = { signals };
  if (record.threatFeed) {
    evidence.threat_feed = {
      malware: record.threatFeed.malware,
      first_seen: record.threatFeed.firstSeen,
      last_seen: record.threatFeed.lastSeen,
    };
  }
  return evidence;
}
