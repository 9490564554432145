/**
 * The spec's INVALID_IP error (spec 7) for a text that is not an IPv4 or
 * IPv6 address: raised by the HTTP lookups and printed by the lookup
 * command, so it lives below both.
 */
import { ApiError } from '../api-error.ts';

/** The spec's INVALID_IP error for a text. */
export function invalidIp(text: string): ApiError {
  return new ApiError('INVALID_IP', `Not a valid IPv4 or IPv6 address: ${text.slice(0, 100)}`, { provided: text });
}
