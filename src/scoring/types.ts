/**
 * Output shapes of the scoring layer, named exactly as spec 2.1 / 2.2 name
 * them (snake_case) so the HTTP projection can serialise them unchanged.
 */
import type { Coverage } from './coverage.ts';

/** Caller-independent context of one lookup. */
export interface ScoringContext {
  /** Cached reverse+forward DNS proof for this address; null when none. */
  verifiedCrawler: { key: string; hostname: string } | null;
  /**
   * What the index answering holds (one object per index and moment, from
   * IndexHolder.coverage). Absent: every kind held and fresh (hand-made records).
   */
  coverage?: Coverage;
}

export type Level = 'low' | 'medium' | 'high';
export type Severity = 'info' | 'low' | 'medium' | 'high';
/** `Unknown`: the index holds no threat data and no other fact raises the level (docs/scoring.md). */
export type ThreatLevel = 'Unknown' | 'Low' | 'Medium' | 'High';

/** Spec 2.1 classification object. */
export interface Classification {
  usage_type: UsageType | null;
  is_datacenter: boolean;
  is_vpn: boolean;
  is_proxy: boolean;
  is_tor: boolean;
  is_privacy_relay: boolean;
  is_mobile: boolean;
  is_known_crawler: boolean;
  is_verified_crawler: boolean;
  proxy_type: ProxyType | null;
  confidence: Level;
  traits: Trait[];
  threat_level: ThreatLevel;
}

export type UsageType =
  | 'tor'
  | 'vpn'
  | 'proxy'
  | 'privacy_relay'
  | 'crawler'
  | 'hosting'
  | 'content_delivery'
  | 'network_service'
  | 'webhook'
  | 'messaging'
  | 'mobile'
  | 'isp'
  | 'business'
  | 'education'
  | 'government'
  | 'non_profit'
  | 'reserved';

export type ProxyType = 'tor' | 'vpn' | 'proxy' | 'privacy_relay';

export type Trait =
  | 'anonymizing'
  | 'shared_egress'
  | 'hosting'
  | 'hosting_asn'
  | 'vpn_asn'
  | 'content_delivery'
  | 'network_service'
  | 'webhook'
  | 'messaging'
  | 'mobile'
  | 'crawler_range'
  | 'verified_crawler'
  | 'threat_listed'
  | 'botnet_c2'
  | 'asn_drop_listed'
  | 'non_routable'
  | 'rpki_invalid'
  | 'origin_conflict';

/** The classification fields of spec 2.1 `network` computed here. */
export interface NetworkContext {
  category: NetworkCategory | null;
  operator: string | null;
  operator_type: OperatorType | null;
  service_name: string | null;
}

export type NetworkCategory =
  | 'residential'
  | 'business'
  | 'education'
  | 'government'
  | 'non_profit'
  | 'mobile'
  | 'hosting'
  | 'content'
  | 'network_service_provider'
  | 'webhook'
  | 'messaging'
  | 'crawler'
  | 'vpn'
  | 'proxy'
  | 'privacy_relay'
  | 'tor'
  | 'reserved';

export type OperatorType =
  | 'isp'
  | 'mobile_isp'
  | 'hosting'
  | 'content_delivery'
  | 'network_service_provider'
  | 'saas'
  | 'vpn_provider'
  | 'proxy_operator'
  | 'privacy_relay_operator'
  | 'tor_relay_operator'
  | 'crawler_operator'
  | 'business'
  | 'education'
  | 'government'
  | 'non_profit'
  | 'reserved';

/** One spec 2.1 evidence signal. */
export interface Signal {
  category: SignalCategory;
  label: string;
  severity: Severity;
  confidence: Level;
  description: string;
}

export type SignalCategory =
  | 'anonymity'
  | 'privacy'
  | 'infrastructure'
  | 'threat'
  | 'routing'
  | 'address'
  | 'crawler'
  | 'network';

/** Spec 2.1 evidence.threat_feed (sidecar metadata; adds no score). */
export interface ThreatFeedEvidence {
  malware: string | null;
  first_seen: string | null;
  last_seen: string | null;
}

export interface Evidence {
  signals: Signal[];
  threat_feed?: ThreatFeedEvidence;
  /** Evidence kinds with signals that the index does not hold: their signals could not be raised (present when any). */
  unavailable?: readonly string[];
  /** Held evidence kinds whose data is stale: their signals weigh less (present when any). */
  stale?: readonly string[];
}

export type Band = 'good' | 'fair' | 'poor' | 'bad';
export type Verdict = 'allow' | 'monitor' | 'challenge' | 'block';
export type RecommendedAction = 'allow' | 'rate_limit' | 'challenge' | 'block';

/** Spec 2.1 score object. */
export interface Score {
  ip_score: number;
  risk_score: number;
  band: Band;
  verdict: Verdict;
  recommended_action: RecommendedAction;
}

/** How each signal moved the risk score (source of explanation drivers). */
export interface Contribution {
  label: string;
  /** The signal's nominal weight. */
  weight: number;
  /** The change it actually caused after category caps and the 0..100 clamp. */
  effective: number;
}

/** computeScore's full result: the spec object plus the trace behind it. */
export interface ScoreTrace {
  score: Score;
  base_risk_score: number;
  contributions: Contribution[];
}

export type Surface = 'content' | 'seo_crawler' | 'login' | 'signup' | 'payment' | 'api';
/** The scenario surfaces of spec 2.2, in output order. */
export const SURFACES: readonly Surface[] = ['content', 'seo_crawler', 'login', 'signup', 'payment', 'api'];

export type Action = 'allow' | 'monitor' | 'challenge' | 'manual_review' | 'block';
/** Actions from most permissive to most restrictive. */
export const ACTIONS: readonly Action[] = ['allow', 'monitor', 'challenge', 'manual_review', 'block'];

export type Profile =
  | 'bogon'
  | 'verified_crawler'
  | 'threat_listed'
  | 'tor_exit'
  | 'vpn_provider'
  | 'open_proxy'
  | 'privacy_relay'
  | 'known_crawler_unverified'
  | 'infrastructure_service'
  | 'ordinary_datacenter'
  | 'mobile_carrier'
  | 'residential'
  | 'unknown';

/** Every decision profile. */
export const PROFILES: readonly Profile[] = [
  'bogon',
  'verified_crawler',
  'threat_listed',
  'tor_exit',
  'vpn_provider',
  'open_proxy',
  'privacy_relay',
  'known_crawler_unverified',
  'infrastructure_service',
  'ordinary_datacenter',
  'mobile_carrier',
  'residential',
  'unknown',
];

/** Spec 2.2 decision object. */
export interface Decision {
  profile: Profile;
  role: string;
  action: Action;
  risk_level: Level;
  confidence: Level;
  policy_version: string;
  allowed_actions: Action[];
  blocked_actions: Action[] | null;
  guardrails_applied: string[];
}

/** Spec 2.2 scores object (eight advisory sub-scores). */
export interface SubScores {
  risk_score: number;
  base_risk_score: number;
  abuse_score: number;
  anonymity_score: number;
  trust_score: number;
  infrastructure_score: number;
  routing_risk_score: number;
  evidence_quality_score: number;
}

export interface Scenario {
  action: Action;
  risk_level: Level;
  confidence: Level;
  reason: string;
}

export type Scenarios = Record<Surface, Scenario>;

export interface Driver {
  type: 'signal' | 'base';
  label: string;
  impact: string;
  impact_score: number;
  direction: 'raises_risk' | 'lowers_risk' | 'neutral';
  reason: string;
}

export interface Explanation {
  summary: string;
  key_reason: string;
  drivers: Driver[];
  guardrails_applied: string[];
  reason_chain: string[];
}

/** What decide() returns: the four additive objects of spec 2.2. */
export interface DecisionObjects {
  decision: Decision;
  scores: SubScores;
  scenarios: Scenarios;
  explanation: Explanation;
}

/** Everything scoring knows about one record. */
export interface Assessment extends DecisionObjects {
  classification: Classification;
  network: NetworkContext;
  evidence: Evidence;
  score: Score;
}
