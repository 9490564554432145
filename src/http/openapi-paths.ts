/**
 * OpenAPI entries for routes that read their request by hand (so that every
 * malformed request gets the spec's error shape): crawler verification and
 * the account routes. Merged over what Elysia derives from the other routes.
 */

const error = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const json = (description: string, properties: Record<string, unknown> = {}) => ({
  description,
  content: { 'application/json': { schema: { type: 'object', properties } } },
});

const AUTH_ERRORS = {
  401: error('UNAUTHORIZED: no valid session'),
  503: error('AUTH_DISABLED: no identity provider configured'),
};

/** Path items keyed by OpenAPI path. */
export const HAND_DOCUMENTED_PATHS = {
  '/v1/crawler/verify': {
    post: {
      tags: ['crawlers'],
      summary: 'Verify whether an IP (and user agent) belongs to a known crawler',
      description:
        'DNS-verifiable families are verified from the IP alone (reverse then forward DNS); other families need the official ranges and the family token in `user_agent`. Always Cache-Control: no-store. See docs/crawlers.md for reason codes.',
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { type: 'object', required: ['ip'], properties: { ip: { type: 'string' }, user_agent: { type: 'string' } } },
          },
        },
      },
      responses: {
        200: json('Spec 2.4 crawler verification result', {
          ip: { type: 'string' },
          user_agent: { type: 'string', nullable: true },
          verification_status: { type: 'string', enum: ['verified', 'known_unverified', 'not_known'] },
          classification: { type: 'object' },
          network: { type: 'object' },
          explanation: { type: 'object', properties: { text: { type: 'string' }, reason_code: { type: 'string' } } },
        }),
        400: error('INVALID_IP (details.provided) or INVALID_REQUEST: missing/non-string ip, non-JSON body, wrong content type, body over 8 KiB'),
        429: error('RATE_LIMITED'),
      },
    },
  },
  '/auth/idp': { get: { tags: ['accounts'], summary: 'Start OAuth sign-in (redirects to the identity provider)', responses: { 302: { description: 'Redirect' }, 503: AUTH_ERRORS[503] } } },
  '/auth/callback': {
    get: {
      tags: ['accounts'],
      summary: 'OAuth callback: ends on /dashboard after sign-in',
      parameters: [
        { name: 'code', in: 'query', schema: { type: 'string' } },
        { name: 'state', in: 'query', schema: { type: 'string' } },
      ],
      responses: { 302: { description: 'Redirect to /dashboard' }, 400: error('OAUTH_STATE_INVALID'), 403: error('OAUTH_DENIED'), 502: error('OAUTH_PROVIDER_ERROR'), 503: AUTH_ERRORS[503] },
    },
  },
  '/auth/logout': { post: { tags: ['accounts'], summary: 'End the session', responses: { 200: json('Signed out'), ...AUTH_ERRORS } } },
  '/auth/me': { get: { tags: ['accounts'], summary: 'The signed-in user', responses: { 200: json('User profile and tier'), ...AUTH_ERRORS } } },
  '/auth/tiers': { get: { tags: ['accounts'], summary: 'Limits of every tier and the caller’s tier', responses: { 200: json('Tiers'), 503: AUTH_ERRORS[503] } } },
  '/auth/keys': {
    get: { tags: ['accounts'], summary: 'The user’s API keys (never the secrets)', responses: { 200: json('Keys'), ...AUTH_ERRORS } },
    post: {
      tags: ['accounts'],
      summary: 'Create an API key (the value is in this response only)',
      requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } } } } } },
      responses: { 201: json('The new key with its secret, shown once'), 400: error('INVALID_REQUEST'), 403: error('PRO_REQUIRED or FORBIDDEN (cross-site)'), ...AUTH_ERRORS },
    },
  },
  '/auth/keys/{id}': {
    delete: {
      tags: ['accounts'],
      summary: 'Revoke a key immediately',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { 200: json('Revoked'), 404: error('NOT_FOUND: no such key of this user'), ...AUTH_ERRORS },
    },
  },
  '/auth/usage': { get: { tags: ['accounts'], summary: 'Requests per key over time windows', responses: { 200: json('Usage'), ...AUTH_ERRORS } } },
  '/dashboard': { get: { tags: ['accounts'], summary: 'Account dashboard (HTML)', responses: { 200: { description: 'HTML page', content: { 'text/html': {} } } } } },
} as const;

/** The spec's error object as an OpenAPI schema. */
export const ERROR_SCHEMA = {
  type: 'object',
  required: ['error', 'code', 'details'],
  properties: { error: { type: 'string' }, code: { type: 'string' }, details: { type: 'object' } },
} as const;
