/**
 * Whether the configured sign-in is complete, and the endpoints it uses:
 * without Arctic, so a server with sign-in off (the routes that read this:
 * the route table, the dashboard, the OpenAPI document) never loads it.
 * providers.ts builds the provider over a complete configuration.
 */
import type { Config } from '../../config.ts';

/** A complete configuration's endpoints and scopes, or why sign-in is disabled. */
export type OAuthConfigCheck =
  | { ok: true; provider: 'github' | 'google' | 'oidc'; endpoints: { authorize: string; token: string; userinfo: string }; scopes: readonly string[] }
  | { ok: false; reason: string };

const DEFAULTS = {
  github: {
    authorize: 'https://github.com/login/oauth/authorize',
    token: 'https://github.com/login/oauth/access_token',
    userinfo: 'https://api.github.com/user',
    scopes: ['read:user', 'user:email'],
  },
  google: {
    authorize: 'https://accounts.google.com/o/oauth2/v2/auth',
    token: 'https://oauth2.googleapis.com/token',
    userinfo: 'https://openidconnect.googleapis.com/v1/userinfo',
    scopes: ['openid', 'email', 'profile'],
  },
  oidc: { authorize: null, token: null, userinfo: null, scopes: ['openid', 'email', 'profile'] },
} as const;

/** Checks the OAuth settings: the provider's endpoints (its defaults, overridden by the endpoint variables), or what is missing. */
export function checkOAuthConfig(oauth: Config['oauth']): OAuthConfigCheck {
  if (oauth.provider === null) return { ok: false, reason: 'IPINTEL_OAUTH_PROVIDER is not set' };
  const d = DEFAULTS[oauth.provider];
  const endpoints = { authorize: oauth.authorizeUrl ?? d.authorize, token: oauth.tokenUrl ?? d.token, userinfo: oauth.userinfoUrl ?? d.userinfo };
  const missing: string[] = [];
  if (!oauth.clientId) missing.push('IPINTEL_OAUTH_CLIENT_ID');
  if (!oauth.redirectUri) missing.push('IPINTEL_OAUTH_REDIRECT_URI');
  if (oauth.provider !== 'oidc' && !oauth.clientSecret) missing.push('IPINTEL_OAUTH_CLIENT_SECRET');
  if (!endpoints.authorize) missing.push('IPINTEL_OAUTH_AUTHORIZE_URL');
  if (!endpoints.token) missing.push('IPINTEL_OAUTH_TOKEN_URL');
  if (!endpoints.userinfo) missing.push('IPINTEL_OAUTH_USERINFO_URL');
  if (missing.length > 0) return { ok: false, reason: `incomplete OAuth configuration: ${missing.join(', ')} missing` };
  for (const [k, v] of Object.entries(endpoints)) {
    if (!URL.canParse(v!)) return { ok: false, reason: `OAuth ${k} URL is not a URL` };
  }
  return { ok: true, provider: oauth.provider, endpoints: endpoints as { authorize: string; token: string; userinfo: string }, scopes: d.scopes };
}

/** Whether sign-in is configured (complete, valid settings). */
export function oauthEnabled(oauth: Config['oauth']): boolean {
  return checkOAuthConfig(oauth).ok;
}
