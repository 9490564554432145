/**
 * The configured identity provider (github, google or a generic oidc),
 * driven through Arctic's OAuth2Client with state and PKCE (S256).
 * Endpoint variables override the github/google defaults too, which
 * serves GitHub Enterprise and loopback test providers.
 */
import { CodeChallengeMethod, OAuth2Client, OAuth2RequestError } from 'arctic';
import type { Config } from '../../config.ts';
import type { ProviderProfile } from '../types.ts';
import { profileFromGithub, profileFromOidc } from './profiles.ts';
import { checkOAuthConfig } from './setup-check.ts';

/**
 * Why the flow failed at the provider: token exchange or profile fetch.
 * `rejectedCode` is the OAuth error code when the provider answered and
 * refused the authorization code itself (the code was bad, not the provider).
 */
export class ProviderError extends Error {
  constructor(
    readonly stage: 'token' | 'userinfo',
    message: string,
    readonly rejectedCode?: string,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** One configured provider. */
export interface OAuthProvider {
  readonly name: 'github' | 'google' | 'oidc';
  /** Where to send the browser. */
  authorizationUrl(state: string, codeVerifier: string): URL;
  /** Exchanges the code for an access token (throws ProviderError). */
  exchangeCode(code: string, codeVerifier: string): Promise<string>;
  /** Reads who signed in (throws ProviderError). */
  fetchProfile(accessToken: string): Promise<ProviderProfile>;
}

/** Provider set-up: either usable or disabled with the reason. */
export type OAuthSetup = { enabled: true; provider: OAuthProvider } | { enabled: false; reason: string };

const TIMEOUT_MS = 10_000;
const MAX_BODY = 256 * 1024;

/** Builds the provider from configuration, or says why sign-in is disabled. */
export function oauthSetup(oauth: Config['oauth']): OAuthSetup {
  const checked = checkOAuthConfig(oauth);
  if (!checked.ok) return { enabled: false, reason: checked.reason };
  const { endpoints, scopes, provider: name } = checked;
  // A public oidc client (no secret) still gets PKCE.
  const client = new OAuth2Client(oauth.clientId!, oauth.clientSecret, oauth.redirectUri!);
  return {
    enabled: true,
    provider: {
      name,
      authorizationUrl: (state, verifier) => client.createAuthorizationURLWithPKCE(endpoints.authorize, state, CodeChallengeMethod.S256, verifier, [...scopes]),
      exchangeCode: (code, verifier) => exchange(client, endpoints.token, code, verifier),
      fetchProfile: (token) => (name === 'github' ? githubProfile(endpoints.userinfo, token) : oidcProfile(name, endpoints.userinfo, token)),
    },
  };
}

/** OAuth error codes meaning the authorization code itself was refused (RFC 6749 5.2; GitHub's own name for it). */
const REJECTED_CODE_ERRORS: ReadonlySet<string> = new Set(['invalid_grant', 'bad_verification_code']);

/** Token exchange with a time limit; any failure becomes ProviderError('token'), marked when the code was refused. */
async function exchange(client: OAuth2Client, tokenUrl: string, code: string, verifier: string): Promise<string> {
  let tokens;
  try {
    tokens = await withTimeout(client.validateAuthorizationCode(tokenUrl, code, verifier), 'token endpoint');
  } catch (err) {
    const refused = err instanceof OAuth2RequestError && REJECTED_CODE_ERRORS.has(err.code) ? err.code : undefined;
    throw new ProviderError('token', `token exchange failed: ${describe(err)}`, refused);
  }
  // GitHub reports errors as 200 + {"error": ...}.
  const data = tokens.data as Record<string, unknown>;
  if (typeof data.error === 'string') {
    const said = data.error.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64);
    throw new ProviderError('token', `token exchange failed: token endpoint said ${said}`, REJECTED_CODE_ERRORS.has(said) ? said : undefined);
  }
  try {
    return tokens.accessToken();
  } catch (err) {
    throw new ProviderError('token', `token exchange failed: ${describe(err)}`);
  }
}

/** OIDC / Google userinfo. */
async function oidcProfile(name: string, url: string, token: string): Promise<ProviderProfile> {
  const parsed = profileFromOidc(name, await getJson(url, token));
  if (!parsed.ok) throw new ProviderError('userinfo', parsed.message);
  return parsed.value;
}

/** GitHub `/user` and `/user/emails` (the latter is optional: no email just means no linking). */
async function githubProfile(userUrl: string, token: string): Promise<ProviderProfile> {
  const user = await getJson(userUrl, token);
  const emails = await getJson(`${userUrl.replace(/\/$/, '')}/emails`, token).catch(() => []);
  const parsed = profileFromGithub(user, emails);
  if (!parsed.ok) throw new ProviderError('userinfo', parsed.message);
  return parsed.value;
}

/** GET with a bearer token, a time limit and a size limit; JSON or ProviderError('userinfo'). */
async function getJson(url: string, token: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', 'user-agent': 'ipintel' },
      signal: AbortSignal.timeout(TIMEOUT_MS),
      redirect: 'error',
    });
  } catch (err) {
    throw new ProviderError('userinfo', `userinfo request failed: ${describe(err)}`);
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) throw new ProviderError('userinfo', `userinfo endpoint answered HTTP ${res.status}`);
  if (text.length > MAX_BODY) throw new ProviderError('userinfo', 'userinfo response too large');
  try {
    return JSON.parse(text);
  } catch {
    throw new ProviderError('userinfo', 'userinfo response is not JSON');
  }
}

/** Rejects when a promise takes longer than the time limit. */
function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out`)), TIMEOUT_MS);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/** A short error description that never includes tokens (Arctic errors carry only codes). */
function describe(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && typeof (err as { code: unknown }).code === 'string') return (err as { code: string }).code;
  return err instanceof Error ? err.message : String(err);
}
