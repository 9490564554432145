/**
 * Response objects of /openapi.json: JSON and text bodies, the headers the
 * server sets (rate limits, Cache-Control, ETag, Retry-After, Allow) and the
 * error responses of each status with the codes each carries.
 */
import { ERROR_STATUS, type ErrorCode } from '../../api-error.ts';
import { ref } from './components.ts';

type Json = Record<string, unknown>;

const header = (description: string, schema: Json = { type: 'string' }): Json => ({ description, schema });

/** Headers every documented response may carry, by name (components.headers). */
export const HEADERS: Record<string, Json> = {
  'X-RateLimit-Limit': header('Requests per minute of the caller’s tier (absent on shared-cacheable successes, spec 8)', { type: 'integer' }),
  'X-RateLimit-Remaining': header('Requests left in the current window', { type: 'integer' }),
  'X-RateLimit-Reset': header('Unix second at which the bucket is full again', { type: 'integer' }),
  'X-RateLimit-Tier': header('The caller’s tier', { type: 'string', enum: ['anonymous', 'free', 'pro'] }),
  'Retry-After': header('Seconds until a request would be admitted', { type: 'integer', minimum: 1 }),
  'Cache-Control': header('Caching of this answer (spec 4.9)'),
  ETag: header('Strong entity tag of the body'),
  'X-Data-As-Of': header('Only with `at`: the RFC 3339 build time of the index that answered (the one served at that moment)', { type: 'string', format: 'date-time' }),
  Allow: header('The methods this path takes, comma-separated'),
};
const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-RateLimit-Tier'];
const headerRefs = (names: readonly string[]): Json => Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));

/** How a route answers: whether it takes a rate-limit token, and what it negotiates. */
export interface ResponseTraits {
  /** The route is rate limited (its answers may carry X-RateLimit-* headers). */
  limited: boolean;
  /** Errors are also negotiated as one line of text/plain (legacy routes). */
  textErrors?: boolean;
}

/** A 200-class answer: body schemas by media type, plus the headers it carries. */
export function success(description: string, content: Record<string, Json>, traits: ResponseTraits, extraHeaders: readonly string[] = []): Json {
  const headers = ['Cache-Control', ...extraHeaders, ...(traits.limited ? RATE_LIMIT_HEADERS : [])];
  return { description, headers: headerRefs(headers), content: Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, { schema }])) };
}

/** JSON body of a named schema. */
export const jsonBody = (name: Parameters<typeof ref>[0]): Record<string, Json> => ({ 'application/json': ref(name) });

const TEXT_ERROR = { type: 'string', description: 'One line: `error: <message>`' };

/** The error response of one status, naming the codes (and their details) a route answers with. */
function errorResponse(status: number, codes: readonly string[], traits: ResponseTraits): Json {
  const names = [...new Set(codes.map((c) => /^[A-Z_]+/.exec(c)![0]))];
  for (const n of names) if (ERROR_STATUS[n as ErrorCode] !== status) throw new Error(`${n} is not a ${status} error`);
  const headers = [
    'Cache-Control',
    ...(traits.limited || status === 429 ? RATE_LIMIT_HEADERS : []),
    ...(status === 429 ? ['Retry-After'] : []),
    ...(status === 405 ? ['Allow'] : []),
  ];
  const content: Json = { 'application/json': { schema: ref('Error') } };
  if (traits.textErrors) content['text/plain'] = { schema: TEXT_ERROR };
  return { description: codes.join('; '), headers: headerRefs(headers), content };
}

/**
 * Errors every route can give: a target or Host that cannot be parsed (400
 * BAD_REQUEST), another method than the path takes (405), an unexpected
 * failure (500); and on rate-limited routes, an invalid key (401) and the limit (429).
 */
function commonErrors(traits: ResponseTraits): Record<number, string[]> {
  const out: Record<number, string[]> = {
    400: ['BAD_REQUEST: the request target or Host header cannot be parsed'],
    405: ['METHOD_NOT_ALLOWED: this path does not take the method (details.allowed_methods; Allow header)'],
    500: ['INTERNAL_ERROR: unexpected server error (no internals in the body)'],
  };
  if (traits.limited) {
    out[401] = ['INVALID_API_KEY: the X-API-Key is invalid or revoked'];
    out[429] = ['RATE_LIMITED: details {limit, remaining, reset_at, upgrade_url}'];
  }
  return out;
}

/** The error responses of a route: its own codes by status, merged with the common ones. */
export function errors(own: Record<number, string[]>, traits: ResponseTraits): Record<string, Json> {
  const all = commonErrors(traits);
  for (const [status, codes] of Object.entries(own)) all[Number(status)] = [...codes, ...(all[Number(status)] ?? [])];
  return Object.fromEntries(Object.entries(all).map(([status, codes]) => [status, errorResponse(Number(status), codes, traits)]));
}
