/**
 * The v1 IP object of spec 2.1/2.2, declared once: the scoring and lookup
 * types derive from these (`Static`), and /openapi.json is generated from them.
 */
import { Type, type Static, type TOptional } from '@sinclair/typebox';
import { EVIDENCE_KINDS } from '../index/evidence-kinds.ts';
import { AsnText, Closed, Named, Nullable, NullableString, StringEnum } from './schema-kit.ts';

export const LEVELS = ['low', 'medium', 'high'] as const;
export const Level = StringEnum(LEVELS);
export const Severity = StringEnum(['info', 'low', 'medium', 'high']);
/** `Unknown`: the index holds no threat data and no other fact raises the level (docs/scoring.md). */
export const ThreatLevel = StringEnum(['Unknown', 'Low', 'Medium', 'High']);
export const UsageType = StringEnum([
  'tor', 'vpn', 'proxy', 'privacy_relay', 'crawler', 'hosting', 'content_delivery', 'network_service', 'webhook',
  'messaging', 'mobile', 'isp', 'business', 'education', 'government', 'non_profit', 'reserved',
  // No evidence names a use (absence is not evidence: never a guessed residential).
  'unknown',
]);
export const ProxyType = StringEnum(['tor', 'vpn', 'proxy', 'privacy_relay']);
export const Trait = StringEnum([
  'anonymizing', 'shared_egress', 'hosting', 'hosting_asn', 'vpn_asn', 'content_delivery', 'network_service', 'webhook',
  'messaging', 'mobile', 'crawler_range', 'verified_crawler', 'threat_listed', 'botnet_c2', 'asn_drop_listed',
  'non_routable', 'rpki_invalid', 'origin_conflict',
]);
export const NetworkCategory = StringEnum([
  'residential', 'business', 'education', 'government', 'non_profit', 'mobile', 'hosting', 'content',
  'network_service_provider', 'webhook', 'messaging', 'crawler', 'vpn', 'proxy', 'privacy_relay', 'tor', 'reserved',
]);
export const OperatorType = StringEnum([
  'isp', 'mobile_isp', 'hosting', 'content_delivery', 'network_service_provider', 'saas', 'vpn_provider', 'proxy_operator',
  'privacy_relay_operator', 'tor_relay_operator', 'crawler_operator', 'business', 'education', 'government', 'non_profit', 'reserved',
]);
export const SignalCategory = StringEnum(['anonymity', 'privacy', 'infrastructure', 'threat', 'routing', 'address', 'crawler', 'network']);
export const Band = StringEnum(['good', 'fair', 'poor', 'bad']);
export const Verdict = StringEnum(['allow', 'monitor', 'challenge', 'block']);
export const RecommendedAction = StringEnum(['allow', 'rate_limit', 'challenge', 'block']);
export const SURFACE_NAMES = ['content', 'seo_crawler', 'login', 'signup', 'payment', 'api'] as const;
export const ACTION_NAMES = ['allow', 'monitor', 'challenge', 'manual_review', 'block'] as const;
export const Action = StringEnum(ACTION_NAMES);
export const PROFILE_NAMES = [
  'bogon', 'verified_crawler', 'threat_listed', 'tor_exit', 'vpn_provider', 'open_proxy', 'privacy_relay',
  'known_crawler_unverified', 'infrastructure_service', 'ordinary_datacenter', 'mobile_carrier', 'residential', 'unknown',
] as const;
export const Profile = StringEnum(PROFILE_NAMES);
export const EvidenceKind = StringEnum(EVIDENCE_KINDS);

/** Spec 2.1 location (null as a whole when the index holds no geolocation for the address). */
export const Location = Named('Location', Closed({
  country: NullableString,
  country_code: Nullable(Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2' })),
  region: NullableString,
  city: NullableString,
  postal_code: NullableString,
  latitude: Nullable(Type.Number({ minimum: -90, maximum: 90 })),
  longitude: Nullable(Type.Number({ minimum: -180, maximum: 180 })),
  timezone: Nullable(Type.String({ pattern: '^[+-][0-9]{2}:[0-9]{2}$', description: 'UTC offset now, ±HH:MM' })),
  timezone_name: Nullable(Type.String({ description: 'IANA time zone name' })),
}));

/** network.allocation: the registry block holding the address. */
export const Allocation = Named('Allocation', Closed({
  cidr: Nullable(Type.String({ description: 'The block when it is one CIDR' })),
  range: Type.String({ description: '"start - end" of the published block' }),
  registry: Type.String(),
  country: NullableString,
  status: Type.String(),
  date: NullableString,
}));

/** network.routability: whether and why the address is globally routable. */
export const Routability = Named('Routability', Closed({
  status: Type.String({ description: 'global, unallocated, unannounced, unknown, or the special-use kind (private, loopback, documentation, …)' }),
  globally_reachable: Nullable(Type.Boolean()),
  reason: Type.String(),
}));

export const Network = Named('Network', Closed({
  asn: Nullable(AsnText),
  org: NullableString,
  category: Nullable(NetworkCategory),
  operator: NullableString,
  operator_type: Nullable(OperatorType),
  service_name: NullableString,
  owner: NullableString,
  allocation: Nullable(Allocation),
  routability: Routability,
  is_special_use: Type.Boolean(),
  is_bogon: Type.Boolean(),
}));

export const Routing = Named('Routing', Closed({
  origin_asn: Nullable(AsnText),
  origins: Type.Array(AsnText),
  prefix: NullableString,
  rpki_status: StringEnum(['valid', 'invalid', 'not_found', 'unknown']),
  confidence: Level,
  origin_conflict: Type.Boolean(),
}));

/** Spec 2.1 score object. */
export const Score = Named('Score', Closed({
  ip_score: Type.Integer({ minimum: 0, maximum: 100 }),
  risk_score: Type.Integer({ minimum: 0, maximum: 100 }),
  band: Band,
  verdict: Verdict,
  recommended_action: RecommendedAction,
}));

/** Spec 2.1 classification object. */
export const Classification = Named('Classification', Closed({
  usage_type: UsageType,
  is_datacenter: Type.Boolean(),
  is_vpn: Type.Boolean(),
  is_proxy: Type.Boolean(),
  is_tor: Type.Boolean(),
  is_privacy_relay: Type.Boolean(),
  is_mobile: Type.Boolean(),
  is_known_crawler: Type.Boolean(),
  is_verified_crawler: Type.Boolean(),
  proxy_type: Nullable(ProxyType),
  confidence: Level,
  traits: Type.Array(Trait),
  threat_level: ThreatLevel,
}));

/** One spec 2.1 evidence signal. */
export const Signal = Named('Signal', Closed({ category: SignalCategory, label: Type.String(), severity: Severity, confidence: Level, description: Type.String() }));

/** Spec 2.1 evidence.threat_feed (sidecar metadata; adds no score). */
export const ThreatFeed = Named('ThreatFeed', Closed({ malware: NullableString, first_seen: NullableString, last_seen: NullableString }));

export const Evidence = Named('Evidence', Closed({
  signals: Type.Array(Signal),
  threat_feed: Type.Optional(ThreatFeed),
  unavailable: Type.Optional(Type.Array(EvidenceKind, { description: 'Evidence kinds with signals that the index does not hold (present when any)' })),
  stale: Type.Optional(Type.Array(EvidenceKind, { description: 'Held evidence kinds whose data is stale: their signals weigh less (present when any)' })),
}));

/** Spec 2.2 decision object. */
export const Decision = Named('Decision', Closed({
  profile: Profile,
  role: Type.String(),
  action: Action,
  risk_level: Level,
  confidence: Level,
  policy_version: Type.String(),
  allowed_actions: Type.Array(Action),
  blocked_actions: Nullable(Type.Array(Action)),
  guardrails_applied: Type.Array(Type.String()),
}));

const SubScore = Type.Integer({ minimum: 0, maximum: 100 });
/** Spec 2.2 scores object (eight advisory sub-scores). */
export const SubScores = Named('SubScores', Closed({
  risk_score: SubScore,
  base_risk_score: SubScore,
  abuse_score: SubScore,
  anonymity_score: SubScore,
  trust_score: SubScore,
  infrastructure_score: SubScore,
  routing_risk_score: SubScore,
  evidence_quality_score: SubScore,
}));

export const Scenario = Named('Scenario', Closed({ action: Action, risk_level: Level, confidence: Level, reason: Type.String() }));
export const Scenarios = Named('Scenarios', Closed({
  content: Scenario,
  seo_crawler: Scenario,
  login: Scenario,
  signup: Scenario,
  payment: Scenario,
  api: Scenario,
}));

export const Driver = Named('Driver', Closed({
  type: StringEnum(['signal', 'base']),
  label: Type.String(),
  impact: Type.String(),
  impact_score: Type.Integer(),
  direction: StringEnum(['raises_risk', 'lowers_risk', 'neutral']),
  reason: Type.String(),
}));

export const Explanation = Named('Explanation', Closed({
  summary: Type.String(),
  key_reason: Type.String(),
  drivers: Type.Array(Driver),
  guardrails_applied: Type.Array(Type.String()),
  reason_chain: Type.Array(Type.String()),
}));

/** Spec 2.3 RDAP object (Pro, include=rdap_contacts). */
export const RdapAllocation = Closed({ cidr: NullableString, range: NullableString, registry: NullableString, country: NullableString });
export const RdapNetwork = Named('RdapNetwork', Closed({ handle: NullableString, name: NullableString, registry: NullableString, registered_owner: NullableString, allocation: RdapAllocation }));
export const RdapContact = Named('RdapContact', Closed({
  handle: Type.Optional(Type.String()),
  roles: Type.Array(Type.String()),
  name: Type.String(),
  organization: Type.Optional(Type.String()),
  phones: Type.Optional(Type.Array(Type.String())),
  emails: Type.Optional(Type.Array(Type.String())),
}));
export const Rdap = Named('Rdap', Closed({ available: Type.Boolean(), network: Nullable(RdapNetwork), contacts: Type.Array(RdapContact) }));

const v1Properties = {
  ip: Type.String({ description: 'The address in canonical text' }),
  stack: StringEnum(['ipv4', 'ipv6']),
  location: Nullable(Location, { description: 'null when the index holds no location for the address' }),
  network: Network,
  routing: Routing,
  score: Score,
  classification: Classification,
  evidence: Evidence,
  decision: Decision,
  scores: SubScores,
  scenarios: Scenarios,
  explanation: Explanation,
};

/** What an answer as of a past moment (`?at=`) adds: the moment asked, the build time of the index served then, and the live parts left out. */
export const AsOf = Named(
  'AsOf',
  Closed(
    {
      at: Type.String({ format: 'date-time', description: 'The moment asked for (a date means 00:00:00 UTC of that day)' }),
      data_as_of: Type.String({ format: 'date-time', description: 'Build time of the index being served at that moment (also the X-Data-As-Of header)' }),
      not_historical: Type.Array(StringEnum(['crawler_dns_proof', 'rdap']), {
        description: 'Live lookups not made for the past: `crawler_dns_proof` (no DNS proof: `is_verified_crawler` is false, crawler ranges of the index still count), `rdap` (no registry answer: `network.owner` is the index\'s own, include=rdap_contacts refused)',
      }),
    },
    { description: 'Only in an answer as of a past moment (`at`)' },
  ),
);

/** The whole v1 object (no `fields`); `rdap` only with an accepted include; `as_of` only with `at`. */
export const V1Object = Named('V1Object', Closed({ ...v1Properties, rdap: Type.Optional(Rdap), as_of: Type.Optional(AsOf) }, { description: 'The v1 IP object (spec 2.1/2.2)' }));
/** A `fields` projection: the requested top-level fields only, each as in the whole object. */
export const V1Projection = Named(
  'V1Projection',
  Closed(
    { ...(Object.fromEntries(Object.entries(V1Object.properties).map(([k, v]) => [k, Type.Optional(v)])) as { [K in keyof typeof V1Object.properties]: TOptional<(typeof V1Object.properties)[K]> }) },
    { description: 'With `fields`: only the requested top-level fields of the v1 object' },
  ),
);

export type V1ObjectBody = Static<typeof V1Object>;
