/**
 * Request-side sessions: finds the session of a request's cookie and
 * yields the Set-Cookie to send when its id was rotated.
 */
import type { AccountStore } from '../store.ts';
import type { SessionRecord } from '../types.ts';
import { SESSION_COOKIE, isSecureContext, readCookie, serializeCookie } from './cookies.ts';

export interface RequestSession {
  session: SessionRecord;
  /** The cookie token in force after this request (rotated or not). */
  token: string;
  /** Set-Cookie values this response must carry (rotation). */
  setCookies: string[];
}

/** The session of a request, or null when it has none (or an unknown/expired one). */
export async function sessionOfRequest(request: Request, accounts: AccountStore, redirectUri: string | null, now: number): Promise<RequestSession | null> {
  const token = readCookie(request.headers.get('cookie'), SESSION_COOKIE);
  if (!token) return null;
  const session = await accounts.validateSession(token);
  if (!session) return null;
  if (!session.rotated) return { session, token, setCookies: [] };
  const secure = isSecureContext(request.url, redirectUri);
  return {
    session,
    token: session.rotated.token,
    setCookies: [sessionCookie(session.rotated.token, session.rotated.expiresAt, now, secure)],
  };
}

/** The Set-Cookie of a session token expiring at `expiresAt`. */
export function sessionCookie(token: string, expiresAt: number, now: number, secure: boolean): string {
  return serializeCookie(SESSION_COOKIE, token, { path: '/', maxAge: (expiresAt - now) / 1000, secure });
}

/** The Set-Cookie that deletes the session cookie. */
export function clearSessionCookie(secure: boolean): string {
  return serializeCookie(SESSION_COOKIE, '', { path: '/', maxAge: 0, secure });
}
