/**
 * OpenAPI pieces shared by the routes: the spec's error object (section 7),
 * the error responses each route can give, and short schemas of the 200
 * bodies. Hand-written JSON Schema (not Elysia `response` validators) so no
 * answer pays for validation at run time.
 */
// openapi-types comes with Elysia (its DocumentDecoration is typed with it).
import type { OpenAPIV3 } from 'openapi-types';

type Schema = OpenAPIV3.SchemaObject;
type Responses = OpenAPIV3.ResponsesObject;

/** The error object of spec 2.6 / 7. */
export const ERROR_SCHEMA: Schema = {
  type: 'object',
  required: ['error', 'code', 'details'],
  properties: {
    error: { type: 'string', description: 'Human-readable message' },
    code: { type: 'string', description: 'Stable error code (spec section 7)' },
    details: { type: 'object', description: 'Code-specific details, e.g. `provided` for INVALID_IP' },
  },
};

const json = (description: string, schema: Schema): OpenAPIV3.ResponseObject => ({ description, content: { 'application/json': { schema } } });

/** Error responses by status, each described by the codes it carries. */
export function errorResponses(byStatus: Record<number, string>): Responses {
  const out: Responses = {};
  for (const [status, description] of Object.entries(byStatus)) out[status] = json(description, ERROR_SCHEMA);
  return out;
}

/** Errors every rate-limited route can give besides its own. */
export const COMMON_ERRORS = {
  401: 'INVALID_API_KEY: the X-API-Key is invalid or revoked',
  429: 'RATE_LIMITED: details {limit, remaining, reset_at, upgrade_url}; X-RateLimit-* headers',
  500: 'INTERNAL_ERROR: unexpected server error (no internals in the body)',
} as const;

/** A 200 JSON response with a schema. */
export function ok(description: string, schema: Schema): Responses {
  return { 200: json(description, schema) };
}

const obj = (properties: Record<string, Schema>, description?: string): Schema => ({ type: 'object', ...(description ? { description } : {}), properties });
const str: Schema = { type: 'string' };
// OpenAPI 3.0 has no type arrays: nullable marks a value that may be null.
const nstr: Schema = { type: 'string', nullable: true };
const bool: Schema = { type: 'boolean' };
const nobj = (description?: string): Schema => ({ type: 'object', nullable: true, ...(description ? { description } : {}) });

/** The v1 IP object of spec 2.1/2.2 (top level; nested objects as in the spec). */
export const V1_SCHEMA = obj({
  ip: str,
  stack: { type: 'string', enum: ['ipv4', 'ipv6'] },
  location: { type: 'object', nullable: true, description: 'country, country_code, region, city, postal_code, latitude, longitude, timezone (±HH:MM), timezone_name; null when unknown' },
  network: obj({ asn: nstr, org: nstr, category: nstr, operator: nstr, operator_type: nstr, service_name: nstr, owner: nstr, allocation: nobj(), routability: { type: 'object' }, is_special_use: bool, is_bogon: bool }),
  routing: obj({ origin_asn: nstr, origins: { type: 'array', items: str }, prefix: nstr, rpki_status: str, confidence: str, origin_conflict: bool }),
  score: obj({ ip_score: { type: 'integer' }, risk_score: { type: 'integer' }, band: str, verdict: str, recommended_action: str }),
  classification: { type: 'object', description: 'usage_type, is_* flags, proxy_type, confidence, traits, threat_level' },
  evidence: obj({ signals: { type: 'array', items: obj({ category: str, label: str, severity: str, confidence: str, description: str }) }, threat_feed: { type: 'object' }, unavailable: { type: 'array', items: str }, stale: { type: 'array', items: str } }),
  decision: { type: 'object' },
  scores: { type: 'object' },
  scenarios: { type: 'object' },
  explanation: { type: 'object' },
  rdap: { type: 'object', description: 'Pro only, with include=rdap_contacts: {available, network, contacts}' },
});

/** The flat legacy object of GET / and GET /{ip}. */
export const LEGACY_SCHEMA = obj(
  Object.fromEntries(['city', 'region', 'country', 'country_name', 'postal', 'loc', 'timezone', 'utc_offset', 'asn', 'org', 'operator', 'domain'].map((k) => [k, nstr])),
  'Flat legacy object (ip plus nullable strings); with format=text or Accept: text/plain, plain text instead',
);
LEGACY_SCHEMA.properties!.ip = str;

/** The ASN object of spec 2.5. */
export const ASN_SCHEMA = obj({
  asn: str,
  name: nstr,
  radar: nobj('Third-party enrichment; null when unset or failing'),
  threat_density: obj({
    threat_network_count: { type: 'integer' },
    threat_ipv4_addresses: { type: 'integer' },
    total_ipv4_addresses: { type: 'integer' },
    ratio: { type: 'number' },
    percent: { type: 'number' },
    significant: bool,
    source: str,
  }),
  asndrop: nobj('asn, as_name, rir, domain, country_code; null when not listed'),
});

/** The dual-stack assessment body. */
export const ASSESSMENT_SCHEMA = obj({
  mode: { type: 'string', enum: ['auto', 'explicit'] },
  ipv4: { type: 'object', nullable: true, description: 'ip, country_code, asn, org, usage_type, is_datacenter, is_vpn, is_proxy, is_tor, is_privacy_relay, score' },
  ipv6: nobj('as ipv4'),
  pair: { type: 'object', description: 'same_asn, same_org, same_country, any_datacenter, any_vpn, any_proxy, any_tor, any_privacy_relay, consistent, combined {risk_score, verdict, reasons}' },
});
