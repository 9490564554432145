/**
 * Sign-in configured (generic OIDC) with an identity provider on a closed
 * port: the account routes exist and answer, and nothing ever reaches a
 * provider. For tests that need the routes, not a sign-in.
 */
export const UNREACHABLE_OIDC_ENV: Readonly<Record<string, string>> = Object.freeze({
  IPINTEL_OAUTH_PROVIDER: 'oidc',
  IPINTEL_OAUTH_CLIENT_ID: 'c',
  IPINTEL_OAUTH_CLIENT_SECRET: 's',
  IPINTEL_OAUTH_REDIRECT_URI: 'http://127.0.0.1/auth/callback',
  IPINTEL_OAUTH_AUTHORIZE_URL: 'http://127.0.0.1:9/authorize',
  IPINTEL_OAUTH_TOKEN_URL: 'http://127.0.0.1:9/token',
  IPINTEL_OAUTH_USERINFO_URL: 'http://127.0.0.1:9/userinfo',
});
