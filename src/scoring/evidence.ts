/**
 * Evidence (spec 2.1 `evidence`): the registry's signals raised by rules
 * over the record, plus the threat-feed sidecar's metadata.
 */
import type { EvidenceKind } from '../index/evidence-kinds.ts';
import { Flag, type IndexRecord, type OverrideFacts } from '../index/record.ts';
import { isNonRoutable } from './classify.ts';
import { coverageGaps, FULL_COVERAGE, KIND_BIT, missingRouteIsEvidence, type Coverage } from './coverage.ts';
import { SIGNALS, type SignalLabel } from './signals.ts';
import type { Classification, Evidence, Level, Signal } from './types.ts';

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
  // Only meaningful for routable space; a bogon is already explained by its own signal. Not consulted
  // unless the routing data covers both families (collectEvidence): a missing route is otherwise no evidence.
  { label: 'unrouted_address', holds: (r) => r.route === null && !isNonRoutable(r) },
  { label: 'known_crawler_range', holds: (_r, c) => c.is_known_crawler },
  { label: 'verified_crawler', holds: (_r, c) => c.is_verified_crawler },
];

/** The coverage bits of some kinds. */
function kindBits(kinds: readonly EvidenceKind[]): number {
  let bits = 0;
  for (const k of kinds) bits |= KIND_BIT[k];
  return bits;
}

/** The operator_override signal of an override: its note (else the registry's text) as the description. */
function overrideSignal(o: OverrideFacts): Signal {
  const d = SIGNALS.operator_override;
  const description = `${o.note ?? d.description} (operator override ${o.cidr})`;
  return { category: d.category, label: d.label, severity: d.severity, confidence: d.confidence, description };
}

/** One level less sure: what a stale source's signal can still claim. */
const LOWER: Readonly<Record<Level, Level>> = { high: 'medium', medium: 'low', low: 'low' };

// Signal objects are immutable and shared: building them per lookup would be waste.
const signalObjects = (stale: boolean) =>
  Object.fromEntries(
    Object.values(SIGNALS).map((d) => [
      d.label,
      Object.freeze({ category: d.category, label: d.label, severity: d.severity, confidence: stale ? LOWER[d.confidence] : d.confidence, description: d.description }),
    ]),
  ) as Record<SignalLabel, Signal>;
const SIGNAL_OBJECTS = signalObjects(false);
const STALE_SIGNAL_OBJECTS = signalObjects(true);

/**
 * The one rule over an absence: it also needs routes for both families
 * (Coverage.routesComplete), and is not consulted for space allocated after
 * the oldest routing snapshot (Coverage.routesAsOf), which it cannot speak to.
 */
const UNROUTED_RULE = SIGNAL_RULES.findIndex((r) => r.label === 'unrouted_address');

/** Per rule, the coverage bit of the kind it reads (0: the service's own data, always held). */
const RULE_KIND_BITS = SIGNAL_RULES.map((r) => {
  const kind = SIGNALS[r.label].kind;
  return kind === null ? 0 : KIND_BIT[kind];
});

/**
 * Spec 2.1 evidence of a record: raised signals and, when listed, threat-feed
 * metadata. A rule over a kind the index does not hold is not consulted (its
 * facts' absence is no evidence); a stale kind's signals are one level less confident.
 */
export function collectEvidence(record: IndexRecord, classification: Classification, coverage: Coverage = FULL_COVERAGE): Evidence {
  const signals: Signal[] = [];
  const override = record.override;
  // The kinds an operator override speaks to are held, and fresh, for its range.
  const spoken = override === undefined ? 0 : kindBits(override.kinds);
  const held = coverage.held | spoken;
  const stale = coverage.stale & ~spoken;
  for (let i = 0; i < SIGNAL_RULES.length; i++) {
    const bit = RULE_KIND_BITS[i];
    if (bit !== 0 && !(held & bit)) continue;
    if (i === UNROUTED_RULE && !missingRouteIsEvidence(record, coverage)) continue;
    const rule = SIGNAL_RULES[i];
    if (rule.holds(record, classification)) signals.push((stale & bit ? STALE_SIGNAL_OBJECTS : SIGNAL_OBJECTS)[rule.label]);
  }
  if (override !== undefined) signals.push(overrideSignal(override));
  const evidence: Evidence = { signals };
  if (record.threatFeed) {
    evidence.threat_feed = {
      malware: record.threatFeed.malware,
      first_seen: record.threatFeed.firstSeen,
      last_seen: record.threatFeed.lastSeen,
    };
  }
  // What the signals could not speak to: kinds not loaded, and kinds whose data is stale.
  if (coverage !== FULL_COVERAGE) {
    const gaps = coverageGaps(coverage);
    if (gaps.unavailable.length > 0) evidence.unavailable = gaps.unavailable;
    if (gaps.stale.length > 0) evidence.stale = gaps.stale;
  }
  return evidence;
}
