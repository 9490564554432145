/**
 * The OpenAPI operation of each route: parameters, bodies, and each status
 * the route answers with (its own error codes, and those every route
 * shares). The route table (routes/table.ts) names each route's operation
 * here; the document's paths are the table's. Whether a route is rate
 * limited or negotiates text errors comes from its declaration (`traits`).
 */
import { V1_FIELDS } from '../../lookup/v1.ts';
import { ref } from './components.ts';
import { errors, jsonBody, success, type ResponseTraits } from './responses.ts';

type Json = Record<string, unknown>;

/** Security of a route that takes an API key: anonymous, or with X-API-Key (a tier of its own). */
const API_KEY_SECURITY = [{}, { apiKey: [] }];
const ADMIN_SECURITY = [{ admin: [] }];
const SESSION_SECURITY = [{ session: [] }];

/** An operation, given the traits its route's declaration implies. */
export type Operation = (traits: ResponseTraits) => Json;

const pathParam = (name: string, description: string): Json => ({ name, in: 'path', required: true, description, schema: { type: 'string' } });
const queryParam = (name: string, description: string, schema: Json): Json => ({ name, in: 'query', required: false, description, schema });

const V1_QUERY = [
  queryParam('fields', 'Top-level fields to return, comma-separated or repeated (400 INVALID_FIELDS on an unknown or empty name); `rdap` with an accepted include', {
    type: 'array',
    items: { type: 'string', enum: [...V1_FIELDS, 'rdap'] },
  }),
  queryParam('include', 'Extra objects: `rdap_contacts` adds the RDAP object (Pro keys only)', { type: 'array', items: { type: 'string', enum: ['rdap_contacts'] } }),
].map((p) => ({ ...p, style: 'form', explode: false }));

/** `at` of every route that answers as of a past moment (docs/http.md). */
const AT_PARAM = queryParam(
  'at',
  'Answer as of a past moment: a date (YYYY-MM-DD, meaning 00:00:00 UTC) or an RFC 3339 time. The answer comes from the index served then, adds `as_of` and the X-Data-As-Of header, carries an ETag and (explicit addresses) Cache-Control: public, max-age=31536000, immutable. Keyed callers only (tier rule, src/tiers.ts).',
  { type: 'string' },
);
/** The errors `at` adds. */
const AT_ERRORS = {
  400: ['INVALID_AT (details.provided)'],
  401: ['UNAUTHORIZED (an anonymous caller asked with at)'],
  422: ['AT_OUT_OF_RANGE (details.provided, details.available_from, details.available_to, details.retention)'],
  503: ['SERVICE_UNAVAILABLE (the history cannot be read; details.reason)'],
};
/** Error lists merged by status. */
const mergeErrors = (...lists: Record<number, string[]>[]): Record<number, string[]> => {
  const out: Record<number, string[]> = {};
  for (const l of lists) for (const [k, v] of Object.entries(l)) out[Number(k)] = [...(out[Number(k)] ?? []), ...v];
  return out;
};
const V1_ANSWER = { 'application/json': { anyOf: [ref('V1Object'), ref('V1Projection')] } };
const V1_ERRORS = {
  400: [
    'INVALID_IP (details.provided)',
    'INVALID_FIELDS (details.allowed_fields, details.invalid_fields)',
    'INVALID_INCLUDE (details.allowed_includes)',
  ],
  403: ['PRO_REQUIRED (details.include, details.allowed_includes)'],
};

function v1Lookup(current: boolean, traits: ResponseTraits): Json {
  return {
    tags: ['lookup'],
    operationId: current ? 'lookupCurrentIp' : 'lookupIp',
    summary: current ? 'Look up the caller IP' : 'Look up an IP address',
    description: current
      ? 'The v1 object for the caller address (Cache-Control: no-store). Same `fields` and `include` rules as /v1/ip/{ip}.'
      : 'The v1 object of spec 2.1/2.2: the whole object (`V1Object`) or, with `fields`, only the requested top-level fields (`V1Projection`). Cache-Control: public, max-age=86400 (no-store with an accepted include); such shared-cacheable answers carry no X-RateLimit-* headers.',
    parameters: current ? [...V1_QUERY, AT_PARAM] : [pathParam('ip', 'IPv4 or IPv6 address'), ...V1_QUERY, AT_PARAM],
    security: API_KEY_SECURITY,
    responses: {
      200: success('The v1 object (only the requested fields with `fields`)', V1_ANSWER, traits, ['X-Data-As-Of', 'ETag']),
      304: { description: 'Not modified (an answer with `at`): If-None-Match matched the ETag', headers: { ETag: { $ref: '#/components/headers/ETag' }, 'Cache-Control': { $ref: '#/components/headers/Cache-Control' } } },
      ...errors(mergeErrors(current ? { ...V1_ERRORS, 400: [...V1_ERRORS[400], 'NO_CLIENT_IP'] } : V1_ERRORS, AT_ERRORS), traits),
    },
  };
}

function asnLookup(alias: boolean, traits: ResponseTraits): Json {
  return {
    tags: ['asn'],
    operationId: alias ? 'asnDetailsLegacy' : 'asnDetails',
    summary: alias ? 'ASN details (legacy alias of /v1/asn/{asn})' : 'ASN details',
    description: 'Local name, build-time threat density over announced IPv4 space, ASN-DROP context, optional radar enrichment. Cache-Control: public, max-age=43200.',
    parameters: [pathParam('asn', 'AS<number> (1..4294967295; the AS prefix is case-insensitive), e.g. AS15169')],
    security: API_KEY_SECURITY,
    responses: { 200: success('The ASN object (spec 2.5)', jsonBody('AsnObject'), traits), ...errors({ 400: ['INVALID_ASN (details.provided)'] }, traits) },
  };
}

const LEGACY_QUERY = [
  queryParam('format', '`text` or `json` (default: JSON unless Accept prefers text/plain); 400 INVALID_REQUEST otherwise', { type: 'string', enum: ['text', 'json'] }),
  queryParam('detail', 'With text: four labelled lines instead of one', { type: 'string', enum: ['1', 'true'] }),
];
const LEGACY_TEXT = { type: 'string', description: 'One line, or four labelled lines with detail=1' };

function legacyLookup(current: boolean, traits: ResponseTraits): Json {
  const own: Record<number, string[]> = { 400: ['INVALID_IP (details.provided)', 'INVALID_REQUEST: format is neither text nor json', ...(current ? ['NO_CLIENT_IP'] : [])] };
  if (!current) own[404] = ['NOT_FOUND: a file browsers and crawlers ask every site for (favicon.ico, robots.txt, …), not an address'];
  return {
    tags: ['legacy'],
    operationId: current ? 'legacyCurrentIp' : 'legacyIp',
    summary: current ? 'Legacy lookup of the caller IP (JSON or text)' : 'Legacy lookup of an IP (JSON or text, ETag)',
    description: 'A flat object, or plain text with `format=text` or `Accept: text/plain` (Vary: Accept); errors follow the same negotiation.',
    parameters: current ? LEGACY_QUERY : [pathParam('ip', 'IPv4 or IPv6 address'), ...LEGACY_QUERY, { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } }],
    security: API_KEY_SECURITY,
    responses: {
      200: success('The legacy object, or its text', { 'application/json': ref('LegacyObject'), 'text/plain': LEGACY_TEXT }, traits, current ? [] : ['ETag']),
      ...(current ? {} : { 304: { description: 'Not modified: If-None-Match matched the ETag', headers: { ETag: { $ref: '#/components/headers/ETag' }, 'Cache-Control': { $ref: '#/components/headers/Cache-Control' } } } }),
      ...errors(own, traits),
    },
  };
}

const AUTH_DISABLED = { 503: ['AUTH_DISABLED: no identity provider configured (details.reason)'] };
const NO_SESSION = { 401: ['UNAUTHORIZED: no valid session'] };
const CROSS_SITE = { 403: ['FORBIDDEN: cross-site request refused'] };

/** An account operation: session cookie, JSON answers, 503 while sign-in is not configured. */
function account(traits: ResponseTraits, summary: string, operationId: string, ok: (t: ResponseTraits) => Json, own: Record<number, string[]> = {}, extra: Json = {}): Json {
  return { tags: ['accounts'], operationId, summary, security: SESSION_SECURITY, ...extra, responses: { ...ok(traits), ...errors({ ...AUTH_DISABLED, ...own }, traits) } };
}

const redirect = (description: string): Json => ({ description, headers: { Location: { description: 'Where the browser goes next', schema: { type: 'string' } } } });

/** The operations, by the name the route table refers to them with. */
export const OPERATIONS = {
  lookupCurrentIp: (traits: ResponseTraits) => v1Lookup(true, traits),
  lookupIp: (traits: ResponseTraits) => v1Lookup(false, traits),
  asnDetails: (traits: ResponseTraits) => asnLookup(false, traits),
  asnDetailsLegacy: (traits: ResponseTraits) => asnLookup(true, traits),
  legacyCurrentIp: (traits: ResponseTraits) => legacyLookup(true, traits),
  legacyIp: (traits: ResponseTraits) => legacyLookup(false, traits),
  assessment: (traits: ResponseTraits): Json => ({
        tags: ['lookup'],
        operationId: 'assessment',
        summary: 'Dual-stack assessment',
        description: 'Assesses `ipv4` and/or `ipv6` (each must be of its family, given once), or the caller IP in auto mode. Cache-Control: public, max-age=86400 with explicit addresses; no-store in auto mode.',
        parameters: [queryParam('ipv4', 'An IPv4 address', { type: 'string' }), queryParam('ipv6', 'An IPv6 address', { type: 'string' }), AT_PARAM],
        security: API_KEY_SECURITY,
        responses: {
          200: success('The assessment of each stack and of the pair', jsonBody('Assessment'), traits, ['X-Data-As-Of', 'ETag']),
          304: { description: 'Not modified (an answer with `at`): If-None-Match matched the ETag', headers: { ETag: { $ref: '#/components/headers/ETag' }, 'Cache-Control': { $ref: '#/components/headers/Cache-Control' } } },
          ...errors(mergeErrors({ 400: ['INVALID_IP (details.provided, details.parameter)', 'NO_CLIENT_IP in auto mode'] }, AT_ERRORS), traits),
        },
      }),
  verifyCrawler: (traits: ResponseTraits): Json => ({
        tags: ['crawlers'],
        operationId: 'verifyCrawler',
        summary: 'Verify whether an IP (and user agent) belongs to a known crawler',
        description: 'DNS-verifiable families are verified from the IP alone (reverse then forward DNS); other families need the official ranges and the family token in `user_agent`. Always Cache-Control: no-store. See docs/crawlers.md for reason codes.',
        security: API_KEY_SECURITY,
        requestBody: { required: true, content: { 'application/json': { schema: ref('CrawlerVerifyRequest') } } },
        responses: {
          200: success('Spec 2.4 crawler verification result', jsonBody('CrawlerVerification'), traits),
          ...errors({ 400: ['INVALID_IP (details.provided, details.reason)', 'INVALID_REQUEST: missing/non-string ip, non-JSON body, wrong content type, body over 8 KiB (details.reason)'] }, traits),
        },
      }),
  dataStatus: (traits: ResponseTraits): Json => ({
        tags: ['operations'],
        operationId: 'dataStatus',
        summary: 'Public service status and capability readiness',
        description: 'Per evidence kind: ready, stale or unavailable. Cache-Control: public, max-age=60.',
        security: API_KEY_SECURITY,
        responses: { 200: success('Data status', jsonBody('DataStatus'), traits), ...errors({}, traits) },
      }),
  health: (traits: ResponseTraits): Json => ({
        tags: ['operations'],
        operationId: 'health',
        summary: 'Liveness and readiness (200 only with an index loaded)',
        responses: { 200: success('Health', jsonBody('Health'), traits), ...errors({}, traits) },
      }),
  metrics: (traits: ResponseTraits): Json => ({
        tags: ['operations'],
        operationId: 'metrics',
        summary: 'Prometheus metrics (admin: Authorization: Bearer <IPINTEL_ADMIN_TOKEN>)',
        security: ADMIN_SECURITY,
        responses: { 200: success('Prometheus text exposition', { 'text/plain': { type: 'string' } }, traits), ...errors({ 403: ['FORBIDDEN: not the admin token'] }, traits) },
      }),
  reload: (traits: ResponseTraits): Json => ({
        tags: ['operations'],
        operationId: 'reload',
        summary: 'Reload the index file and the decision policy (admin)',
        security: ADMIN_SECURITY,
        responses: {
          200: success('What was loaded', jsonBody('Reload'), traits),
          ...errors({ 400: ['INVALID_REQUEST: the index file or policy was refused; the previous one keeps serving (details.what)'], 403: ['FORBIDDEN: not the admin token'] }, traits),
        },
      }),
  openApiDocument: (traits: ResponseTraits): Json => ({
        tags: ['operations'],
        operationId: 'openApiDocument',
        summary: 'This document (OpenAPI 3.0)',
        responses: { 200: success('The OpenAPI document', { 'application/json': { type: 'object', additionalProperties: true } }, traits), ...errors({}, traits) },
      }),
  apiReference: (traits: ResponseTraits): Json => ({
        tags: ['operations'],
        operationId: 'apiReference',
        summary: 'The API reference over this document (HTML; also at /docs/)',
        responses: { 200: success('The reference page', { 'text/html': { type: 'string' } }, traits), ...errors({}, traits) },
      }),
  signIn: (traits: ResponseTraits): Json => ({ tags: ['accounts'], operationId: 'signIn', summary: 'Start OAuth sign-in (redirects to the identity provider)', responses: { 302: redirect('To the identity provider'), ...errors(AUTH_DISABLED, traits) } }),
  signInCallback: (traits: ResponseTraits): Json => ({
        tags: ['accounts'],
        operationId: 'signInCallback',
        summary: 'OAuth callback: ends on /dashboard after sign-in',
        parameters: [queryParam('code', 'Authorization code', { type: 'string' }), queryParam('state', 'OAuth state', { type: 'string' }), queryParam('error', 'Provider error', { type: 'string' })],
        responses: {
          302: redirect('To /dashboard'),
          ...errors({ ...AUTH_DISABLED, 400: ['OAUTH_STATE_INVALID', 'OAUTH_CODE_INVALID: the provider refused the code', 'INVALID_REQUEST: no authorization code'], 403: ['OAUTH_DENIED'], 502: ['OAUTH_PROVIDER_ERROR'] }, traits),
        },
      }),
  signOut: (traits: ResponseTraits): Json => account(traits, 'End the session', 'signOut', (traits) => ({ 200: success('Signed out', jsonBody('SignedOut'), traits) }), CROSS_SITE),
  me: (traits: ResponseTraits): Json => account(traits, 'The signed-in user', 'me', (traits) => ({ 200: success('User, identities and session', jsonBody('Me'), traits) }), NO_SESSION),
  tiers: (traits: ResponseTraits): Json => account(traits, 'Limits of every tier and the caller’s tier', 'tiers', (traits) => ({ 200: success('Tiers', jsonBody('Tiers'), traits) }), {}, { security: [{}, { apiKey: [] }, { session: [] }] }),
  listKeys: (traits: ResponseTraits): Json => account(traits, 'The user’s API keys (never the secrets)', 'listKeys', (traits) => ({ 200: success('Keys', jsonBody('ApiKeys'), traits) }), NO_SESSION),
  createKey: (traits: ResponseTraits): Json => account(traits, 
        'Create an API key (the value is in this response only)',
        'createKey',
        (traits) => ({ 201: success('The new key with its secret, shown once', jsonBody('CreatedApiKey'), traits) }),
        {
          ...NO_SESSION,
          400: ['INVALID_REQUEST: bad name or tier, or too many active keys'],
          403: ['PRO_REQUIRED: Pro keys are invite-only', 'FORBIDDEN: cross-site request refused'],
          413: ['PAYLOAD_TOO_LARGE (details.limit)'],
          415: ['UNSUPPORTED_MEDIA_TYPE (details.content_type)'],
        },
        { requestBody: { required: false, content: { 'application/json': { schema: ref('CreateKeyRequest') } } } },
      ),
  revokeKey: (traits: ResponseTraits): Json => account(traits, 'Revoke a key immediately', 'revokeKey', (traits) => ({ 200: success('The revoked key', jsonBody('ApiKey'), traits) }), { ...NO_SESSION, ...CROSS_SITE, 404: ['NOT_FOUND: no such key of this user'] }, {
        parameters: [pathParam('id', 'Key id')],
      }),
  usage: (traits: ResponseTraits): Json => account(traits, 'Requests per key over time windows', 'usage', (traits) => ({ 200: success('Usage', jsonBody('Usage'), traits) }), NO_SESSION),
  dashboard: (traits: ResponseTraits): Json => ({
        tags: ['accounts'],
        operationId: 'dashboard',
        summary: 'Account dashboard (HTML)',
        responses: {
          200: success('The dashboard, or the sign-in page without a session', { 'text/html': { type: 'string' } }, traits),
          503: { description: 'Sign-in is not configured (HTML page)', content: { 'text/html': { schema: { type: 'string' } } } },
          ...errors({}, traits),
        },
      }),
} satisfies Record<string, Operation>;

/** The name of an operation (what a route declares). */
export type OperationName = keyof typeof OPERATIONS;
