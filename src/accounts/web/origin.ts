/** Pure cross-site request check for cookie-authenticated writes (defence in depth beside SameSite=Lax). */

/**
 * Whether a state-changing request may proceed: requests without Origin
 * (curl, same-origin navigations in old browsers) pass; a browser's Origin
 * must name this host or the host of the public redirect URI.
 */
export function isSameOriginRequest(headers: Headers, requestUrl: string, redirectUri: string | null): boolean {
  if (headers.get('sec-fetch-site') === 'cross-site') return false;
  const origin = headers.get('origin');
  if (origin === null) return true;
  if (origin === 'null') return false;
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    return false;
  }
  const allowed = [hostOf(requestUrl), hostOf(redirectUri)];
  return allowed.includes(originHost);
}

/** The host of a URL, or null. */
function hostOf(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
