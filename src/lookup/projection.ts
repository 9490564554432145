/**
 * `fields` and `include` of spec 4.1 (rules 1-6): which top-level fields a
 * lookup returns, and whether the Pro RDAP include is accepted.
 */
import { ApiError } from '../api-error.ts';
import type { Tier } from '../tiers.ts';
import { V1_FIELDS } from './v1.ts';

/** Include names the service supports. */
export const SUPPORTED_INCLUDES = ['rdap_contacts'] as const;

export interface Projection {
  /** Requested fields, or null for the full object. */
  fields: Set<string> | null;
  /** Whether `include=rdap_contacts` was accepted (Pro). */
  rdap: boolean;
}

/** Splits a query value (string, repeated array, or missing) into trimmed names. */
function names(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  const joined = Array.isArray(value) ? value.join(',') : String(value);
  return joined.split(',').map((s) => s.trim());
}

/** Validates `include` then `fields` for a caller's tier; throws the spec's errors. */
export function parseProjection(query: { fields?: unknown; include?: unknown }, tier: Tier): Projection {
  let rdap = false;
  const includes = names(query.include);
  if (includes !== null) {
    const requested = includes.filter(Boolean);
    const invalid = requested.filter((n) => !(SUPPORTED_INCLUDES as readonly string[]).includes(n));
    if (requested.length === 0 || invalid.length > 0) {
      throw new ApiError('INVALID_INCLUDE', `Unsupported include: ${invalid.join(', ') || '(empty)'}`, {
        invalid_includes: requested.length === 0 ? [''] : invalid,
        supported_includes: [...SUPPORTED_INCLUDES],
      });
    }
    if (tier !== 'pro') {
      throw new ApiError('PRO_REQUIRED', 'include=rdap_contacts requires a Pro API key', {
        include: requested,
        allowed_includes: [],
        required_tier: 'pro',
      });
    }
    rdap = true;
  }

  const allowed: string[] = rdap ? [...V1_FIELDS, 'rdap'] : [...V1_FIELDS];
  const requestedFields = names(query.fields);
  if (requestedFields === null) return { fields: null, rdap };
  const nonEmpty = requestedFields.filter(Boolean);
  const invalid = requestedFields.filter((f) => !allowed.includes(f));
  if (nonEmpty.length === 0 || invalid.length > 0) {
    throw new ApiError('INVALID_FIELDS', nonEmpty.length === 0 ? 'fields must name at least one field' : `Unknown fields: ${invalid.join(', ')}`, {
      allowed_fields: allowed,
      invalid_fields: nonEmpty.length === 0 ? [''] : invalid,
    });
  }
  return { fields: new Set(nonEmpty), rdap };
}
