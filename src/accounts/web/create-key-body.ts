/** Pure: validates the body of POST /auth/keys (`{"name"?: string, "tier"?: "free"|"pro"}`, empty allowed). */
import type { KeyTier } from '../types.ts';
import { checkKeyName, checkKeyTier } from '../validation.ts';

/** Largest body accepted; a key name needs far less. */
export const MAX_BODY_BYTES = 4096;
/** Active keys one account may hold. */
export const MAX_ACTIVE_KEYS = 25;

export type BodyCheck =
  | { ok: true; value: { name: string | null; tier: KeyTier | null } }
  | { ok: false; code: 'INVALID_REQUEST' | 'PAYLOAD_TOO_LARGE' | 'UNSUPPORTED_MEDIA_TYPE'; message: string; details: Record<string, unknown> };

/** Parses and checks the raw body text. */
export function parseCreateKeyBody(contentType: string | null, text: string): BodyCheck {
  if (text.length > MAX_BODY_BYTES) return { ok: false, code: 'PAYLOAD_TOO_LARGE', message: `Body larger than ${MAX_BODY_BYTES} bytes`, details: { limit: MAX_BODY_BYTES } };
  if (text.trim() === '') return { ok: true, value: { name: null, tier: null } };
  if (!/^application\/json\b/i.test((contentType ?? '').trim())) {
    return { ok: false, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json', details: { content_type: contentType } };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, code: 'INVALID_REQUEST', message: 'Body is not valid JSON', details: {} };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, code: 'INVALID_REQUEST', message: 'Body must be a JSON object', details: {} };
  }
  const o = parsed as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => k !== 'name' && k !== 'tier');
  if (unknown.length > 0) return { ok: false, code: 'INVALID_REQUEST', message: 'Unknown fields in body', details: { unknown_fields: unknown, allowed_fields: ['name', 'tier'] } };
  let name: string | null = null;
  if (o.name !== undefined && o.name !== null) {
    const c = checkKeyName(o.name);
    if (!c.ok) return { ok: false, code: 'INVALID_REQUEST', message: c.message, details: { field: 'name' } };
    name = c.value;
  }
  let tier: KeyTier | null = null;
  if (o.tier !== undefined && o.tier !== null) {
    const c = checkKeyTier(o.tier);
    if (!c.ok) return { ok: false, code: 'INVALID_REQUEST', message: c.message, details: { field: 'tier', allowed: ['free', 'pro'] } };
    tier = c.value;
  }
  return { ok: true, value: { name, tier } };
}
