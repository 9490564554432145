/** Pure cookie helpers for the session and OAuth-state cookies. */

/** Session cookie (value: the session id; the server stores only its hash). */
export const SESSION_COOKIE = 'ipintel_session';
/** Pending sign-in cookie (value: `<state>.<pkce verifier>`), scoped to /auth. */
export const OAUTH_COOKIE = 'ipintel_oauth';

/** Reads one cookie from a Cookie header; null when absent. */
export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return null;
    }
  }
  return null;
}

export interface CookieOptions {
  path: string;
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
  secure: boolean;
}

/** A Set-Cookie value: always HttpOnly and SameSite=Lax (Lax lets the provider's redirect back carry it). */
export function serializeCookie(name: string, value: string, o: CookieOptions): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${o.path}`, `Max-Age=${Math.max(0, Math.floor(o.maxAge))}`, 'HttpOnly', 'SameSite=Lax'];
  if (o.maxAge <= 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  if (o.secure) parts.push('Secure');
  return parts.join('; ');
}

/** Whether cookies must be Secure: the request came over https or the public redirect URI is https. */
export function isSecureContext(requestUrl: string, redirectUri: string | null): boolean {
  return requestUrl.startsWith('https://') || (redirectUri ?? '').startsWith('https://');
}
