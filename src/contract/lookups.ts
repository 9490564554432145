/**
 * The other lookup answers, declared once: the ASN object (spec 2.5), the
 * dual-stack assessment (spec 4.2), the legacy object (spec 4.6) and the
 * crawler verification object (spec 2.4).
 */
import { Type, type Static } from '@sinclair/typebox';
import { AsnText, Closed, Named, Nullable, NullableString, StringEnum } from './schema-kit.ts';
import { KIND_STATES } from './service.ts';
import { AsOf, Classification, Evidence, Score, Verdict } from './v1.ts';


const UNKNOWN_WITHOUT_THREAT = { description: 'null when the index holds no threat list (threat_data "unavailable"): unknown, not zero' };
export const ThreatDensity = Named('ThreatDensity', Closed({
  threat_network_count: Nullable(Type.Integer({ minimum: 0 }), UNKNOWN_WITHOUT_THREAT),
  threat_ipv4_addresses: Nullable(Type.Integer({ minimum: 0 }), UNKNOWN_WITHOUT_THREAT),
  total_ipv4_addresses: Type.Integer({ minimum: 0, description: 'IPv4 addresses the ASN announces in the loaded routing (or ASN range) data' }),
  ratio: Nullable(Type.Number({ minimum: 0 }), UNKNOWN_WITHOUT_THREAT),
  percent: Nullable(Type.Number({ minimum: 0 }), UNKNOWN_WITHOUT_THREAT),
  significant: Nullable(Type.Boolean(), UNKNOWN_WITHOUT_THREAT),
  threat_data: StringEnum(KIND_STATES, { description: "The index's threat lists, as /v1/data/status shows them" }),
  source: Type.String(),
}));
export const AsnDrop = Named('AsnDrop', Closed({ asn: Type.String(), as_name: NullableString, rir: NullableString, domain: NullableString, country_code: NullableString }));
/** Spec 2.5 ASN object. */
export const AsnObject = Named('AsnObject', Closed({
  asn: AsnText,
  name: NullableString,
  radar: Nullable(Type.Object({}, { additionalProperties: true }), { description: 'Third-party enrichment as its publisher gives it; null when unset or failing' }),
  threat_density: ThreatDensity,
  asndrop: Nullable(AsnDrop, { description: 'null when the ASN is not on ASN-DROP' }),
}));

/** One address's part of the assessment. */
export const StackAssessment = Named('StackAssessment', Closed({
  ip: Type.String(),
  country_code: NullableString,
  asn: Nullable(AsnText),
  org: NullableString,
  // The same fields as the v1 classification's, declared there once.
  ...Type.Pick(Classification, ['usage_type', 'is_datacenter', 'is_vpn', 'is_proxy', 'is_tor', 'is_privacy_relay']).properties,
  score: Score,
  // What the booleans cannot speak to: the same lists as the v1 evidence's, declared there once.
  ...Type.Pick(Evidence, ['unavailable', 'stale']).properties,
}));
export type StackAssessmentBody = Static<typeof StackAssessment>;
const NullableBoolean = Nullable(Type.Boolean(), { description: 'null unless both stacks are known' });
export const PairAssessment = Named('PairAssessment', Closed({
  same_asn: NullableBoolean,
  same_org: NullableBoolean,
  same_country: NullableBoolean,
  any_datacenter: Type.Boolean(),
  any_vpn: Type.Boolean(),
  any_proxy: Type.Boolean(),
  any_tor: Type.Boolean(),
  any_privacy_relay: Type.Boolean(),
  consistent: NullableBoolean,
  combined: Closed({ risk_score: Type.Integer({ minimum: 0, maximum: 100 }), verdict: Verdict, reasons: Type.Array(Type.String()) }),
}));
/** GET /v1/assessment. */
export const Assessment = Named('Assessment', Closed({
  mode: StringEnum(['auto', 'explicit']),
  ipv4: Nullable(StackAssessment),
  ipv6: Nullable(StackAssessment),
  pair: PairAssessment,
  as_of: Type.Optional(AsOf),
}));

/** The flat legacy object of GET / and GET /{ip}. */
export const LegacyObject = Named('LegacyObject', Closed({
  ip: Type.String(),
  city: NullableString,
  region: NullableString,
  country: Nullable(Type.String({ description: 'ISO 3166-1 alpha-2 code' })),
  country_name: NullableString,
  postal: NullableString,
  loc: Nullable(Type.String({ description: '"latitude,longitude"' })),
  timezone: NullableString,
  utc_offset: NullableString,
  asn: Nullable(AsnText),
  org: NullableString,
  operator: NullableString,
  domain: NullableString,
}));
export type LegacyObjectBody = Static<typeof LegacyObject>;

export const VerificationStatus = StringEnum(['verified', 'known_unverified', 'not_known']);
export const ReasonCode = StringEnum(['verified_crawler', 'dns_mismatch', 'dns_timeout', 'ua_mismatch', 'range_only', 'unverified_claim', 'not_a_known_crawler']);
export const CrawlerNetwork = Closed({
  owner: NullableString,
  allocation: Nullable(Closed({ cidr: NullableString, registry: Type.String(), country: NullableString })),
});
/** Spec 2.4 crawler verification object (POST /v1/crawler/verify). */
export const CrawlerVerification = Named('CrawlerVerification', Closed({
  ip: Type.String(),
  user_agent: NullableString,
  verification_status: VerificationStatus,
  classification: Closed({
    is_known_crawler: Type.Boolean(),
    is_verified_crawler: Type.Boolean(),
    crawler_provider: NullableString,
    crawler_type: NullableString,
    crawler_verified_by: NullableString,
    crawler_hostname: NullableString,
  }),
  network: CrawlerNetwork,
  explanation: Closed({ text: Type.String(), reason_code: ReasonCode }),
}));
/** The request body of POST /v1/crawler/verify. */
export const CrawlerVerifyRequest = Named('CrawlerVerifyRequest', Type.Object({ ip: Type.String(), user_agent: Type.Optional(Type.String()) }));
