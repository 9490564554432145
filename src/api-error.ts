/**
 * The spec's errors (section 7): each code with its HTTP status, and the
 * error every layer throws. Below the HTTP layer so the lookup, scoring and
 * crawler modules can raise them without importing upwards; src/http/error-response.ts
 * renders them as responses.
 */

/** Error codes of spec section 7, with their HTTP status. */
export const ERROR_STATUS = {
  INVALID_IP: 400,
  INVALID_FIELDS: 400,
  INVALID_INCLUDE: 400,
  INVALID_ASN: 400,
  NO_CLIENT_IP: 400,
  /** Not in the spec table: a request body that is not what the route takes (documented in docs/http.md). */
  INVALID_REQUEST: 400,
  /** Not in the spec table: a request whose target or Host header cannot be parsed (docs/http.md). */
  BAD_REQUEST: 400,
  /** Not in the spec table: an `at` that is not a date or an RFC 3339 time (docs/http.md, Answers as of a past moment). */
  INVALID_AT: 400,
  /** Not in the spec table: an `at` before the retained history or in the future; `details` names the available range. */
  AT_OUT_OF_RANGE: 422,
  UNAUTHORIZED: 401,
  INVALID_API_KEY: 401,
  FORBIDDEN: 403,
  PRO_REQUIRED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  AUTH_DISABLED: 503,
  /** Not in the spec table (account sign-in, docs/accounts.md): the user declined consent at the identity provider. */
  OAUTH_DENIED: 403,
  /** Not in the spec table: the OAuth state or its cookie is missing, expired or does not match. */
  OAUTH_STATE_INVALID: 400,
  /** Not in the spec table: the identity provider refused the authorization code (`invalid_grant`): a bad request, not a bad gateway. */
  OAUTH_CODE_INVALID: 400,
  /** Not in the spec table: the identity provider's token or userinfo endpoint failed or could not be reached. */
  OAUTH_PROVIDER_ERROR: 502,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Longest `details.provided` echoed back; a longer text is cut and marked with an ellipsis. */
export const MAX_PROVIDED_CHARS = 100;

/** The text a client sent, shortened for echoing: an answer's size must not be the client's choice. */
export function boundedProvided(text: string): string {
  return text.length <= MAX_PROVIDED_CHARS ? text : text.slice(0, MAX_PROVIDED_CHARS) + '…';
}

/** An error that renders as the spec's error object. */
export class ApiError extends Error {
  readonly status: number;
  readonly details: Record<string, unknown>;
  constructor(
    readonly code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    /** Extra response headers (e.g. rate-limit headers on 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
    // Every route echoes what it was given in `provided`: bounded here once for all of them.
    const provided = details.provided;
    this.details = typeof provided === 'string' && provided.length > MAX_PROVIDED_CHARS ? { ...details, provided: boundedProvided(provided) } : details;
  }

  /** The JSON body of spec 2.6. */
  toBody(): { error: string; code: ErrorCode; details: Record<string, unknown> } {
    return { error: this.message, code: this.code, details: this.details };
  }
}
