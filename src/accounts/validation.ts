/** Pure checks of user-supplied account strings (emails, key names, tiers). */
import type { KeyTier } from './types.ts';

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

const MAX_EMAIL = 254;
const MAX_KEY_NAME = 64;
// Control characters would corrupt terminal output of the keys script and logs.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/** Normalises an email address (trim, lower-case) or explains why it is not one. */
export function checkEmail(raw: unknown): Checked<string> {
  if (typeof raw !== 'string') return { ok: false, message: 'email must be a string' };
  const email = raw.trim().toLowerCase();
  if (email.length === 0 || email.length > MAX_EMAIL) return { ok: false, message: `email must be 1..${MAX_EMAIL} characters` };
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || CONTROL_CHARS.test(email)) return { ok: false, message: 'email is not an address' };
  return { ok: true, value: email };
}

/** Checks a key name: 1..64 printable characters after trimming. */
export function checkKeyName(raw: unknown): Checked<string> {
  if (typeof raw !== 'string') return { ok: false, message: 'name must be a string' };
  const name = raw.trim();
  if (name.length === 0 || name.length > MAX_KEY_NAME) return { ok: false, message: `name must be 1..${MAX_KEY_NAME} characters` };
  if (CONTROL_CHARS.test(name)) return { ok: false, message: 'name must not contain control characters' };
  return { ok: true, value: name };
}

/** Checks a key tier name (`free` or `pro`). */
export function checkKeyTier(raw: unknown): Checked<KeyTier> {
  if (raw === 'free' || raw === 'pro') return { ok: true, value: raw };
  return { ok: false, message: 'tier must be "free" or "pro"' };
}

/** Rank of tiers, so "at most the user's tier" is a comparison. */
export function tierRank(tier: KeyTier): number {
  return tier === 'pro' ? 2 : 1;
}
