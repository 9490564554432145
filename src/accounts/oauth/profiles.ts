/** Pure: turns each provider's userinfo JSON into a ProviderProfile, or explains what is wrong. */
import type { ProviderProfile } from '../types.ts';
import { checkEmail } from '../validation.ts';

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const MAX_SUBJECT = 255;
const MAX_NAME = 200;

/** A display name, trimmed to a sane length, or null. */
function nameOf(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const s = v.trim().slice(0, MAX_NAME);
  return s === '' ? null : s;
}

/** A subject: non-empty string (or a number, as GitHub ids are). */
function subjectOf(v: unknown): string | null {
  const s = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v;
  return typeof s === 'string' && s.length > 0 && s.length <= MAX_SUBJECT ? s : null;
}

/** A normalised email, or null when absent or not an address. */
function emailOf(v: unknown): string | null {
  const c = checkEmail(v);
  return c.ok ? c.value : null;
}

/**
 * OIDC / Google userinfo (`sub`, `email`, `email_verified`, `name`). When
 * `email_verified` is absent the address is taken as verified: the operator
 * chose this identity provider, and interface.md only promises `sub` + `email`.
 */
export function profileFromOidc(provider: string, json: unknown): Parsed<ProviderProfile> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { ok: false, message: 'userinfo is not a JSON object' };
  const o = json as Record<string, unknown>;
  const subject = subjectOf(o.sub);
  if (subject === null) return { ok: false, message: 'userinfo has no usable "sub"' };
  const email = emailOf(o.email);
  const verified = o.email_verified === undefined ? true : o.email_verified === true || o.email_verified === 'true';
  return { ok: true, value: { provider, subject, email, emailVerified: email !== null && verified, name: nameOf(o.name) ?? nameOf(o.preferred_username) } };
}

/** GitHub `/user` plus `/user/emails`: the id is the subject, the primary verified address the email. */
export function profileFromGithub(user: unknown, emails: unknown): Parsed<ProviderProfile> {
  if (typeof user !== 'object' || user === null || Array.isArray(user)) return { ok: false, message: 'GitHub user is not a JSON object' };
  const u = user as Record<string, unknown>;
  const subject = subjectOf(u.id);
  if (subject === null) return { ok: false, message: 'GitHub user has no usable "id"' };
  const list = Array.isArray(emails) ? (emails as Record<string, unknown>[]) : [];
  const primary = list.find((e) => e && e.primary === true && e.verified === true) ?? list.find((e) => e && e.verified === true);
  const email = primary ? emailOf(primary.email) : null;
  return { ok: true, value: { provider: 'github', subject, email, emailVerified: email !== null, name: nameOf(u.name) ?? nameOf(u.login) } };
}
