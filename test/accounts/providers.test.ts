/** github and google sign-in (endpoints overridden to a loopback mock), and AUTH_DISABLED. */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { startMockIdp, type MockIdp } from './helpers/mock-idp.ts';
import { startTestApp } from './helpers/test-app.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { TestClient } from './helpers/client.ts';
import { oauthSetup } from '../../src/accounts/oauth/providers.ts';
import { loadConfig } from '../../src/config.ts';

let idp: MockIdp;
beforeAll(() => {
  idp = startMockIdp();
});
afterAll(() => idp.stop());

function envFor(provider: 'github' | 'google', userinfoPath: string): Record<string, string> {
  return {
    IPINTEL_OAUTH_PROVIDER: provider,
    IPINTEL_OAUTH_CLIENT_ID: idp.clientId,
    IPINTEL_OAUTH_CLIENT_SECRET: idp.clientSecret,
    IPINTEL_OAUTH_AUTHORIZE_URL: `${idp.url}/authorize`,
    IPINTEL_OAUTH_TOKEN_URL: `${idp.url}/token`,
    IPINTEL_OAUTH_USERINFO_URL: `${idp.url}${userinfoPath}`,
  };
}

describe('providers', () => {
  test('github: id is the subject, the primary verified email is used', async () => {
    const app = await startTestApp(envFor('github', '/user'));
    try {
      idp.behaviour = 'approve';
      idp.user = { sub: '1234', email: 'Octo@Example.test', email_verified: true, name: 'octocat' };
      const client = new TestClient();
      const { res } = await client.follow(`${app.url}/auth/idp`);
      expect(res.status).toBe(200);
      const me = await (await client.fetch(`${app.url}/auth/me`)).json() as any;
      expect(me.user.email).toBe('octo@example.test');
      expect(me.user.name).toBe('octocat');
      expect(me.identities[0].provider).toBe('github');
      expect(idp.tokenRequests.at(-1)).toEqual({ pkceOk: true, clientOk: true });
    } finally {
      await app.stop();
    }
  });

  test('github without a verified email still signs in, without an email', async () => {
    const app = await startTestApp(envFor('github', '/user'));
    try {
      idp.user = { sub: '99', email: 'unverified@example.test', email_verified: false, name: 'nomail' };
      const client = new TestClient();
      await client.follow(`${app.url}/auth/idp`);
      const me = await (await client.fetch(`${app.url}/auth/me`)).json() as any;
      expect(me.user.email).toBeNull();
    } finally {
      await app.stop();
    }
  });

  test('google: OIDC userinfo with email_verified', async () => {
    const app = await startTestApp(envFor('google', '/userinfo'));
    try {
      idp.user = { sub: 'g-1', email: 'g@example.test', email_verified: true, name: 'Gee' };
      const client = new TestClient();
      const start = await client.fetch(`${app.url}/auth/idp`);
      const scope = new URL(start.headers.get('location')!).searchParams.get('scope');
      expect(scope).toBe('openid email profile');
      await client.follow(start.headers.get('location')!);
      const me = await (await client.fetch(`${app.url}/auth/me`)).json() as any;
      expect(me.user.email).toBe('g@example.test');
      expect(me.identities[0].provider).toBe('google');
    } finally {
      await app.stop();
    }
  });

  test('default endpoints are the real providers when not overridden', () => {
    const gh = oauthSetup(loadConfig({ IPINTEL_OAUTH_PROVIDER: 'github', IPINTEL_OAUTH_CLIENT_ID: 'c', IPINTEL_OAUTH_CLIENT_SECRET: 's', IPINTEL_OAUTH_REDIRECT_URI: 'https://x.example/auth/callback' }).oauth);
    expect(gh.enabled && gh.provider.authorizationUrl('st', 'v'.repeat(43)).origin).toBe('https://github.com');
    const go = oauthSetup(loadConfig({ IPINTEL_OAUTH_PROVIDER: 'google', IPINTEL_OAUTH_CLIENT_ID: 'c', IPINTEL_OAUTH_CLIENT_SECRET: 's', IPINTEL_OAUTH_REDIRECT_URI: 'https://x.example/auth/callback' }).oauth);
    expect(go.enabled && go.provider.authorizationUrl('st', 'v'.repeat(43)).origin).toBe('https://accounts.google.com');
  });
});

describe('AUTH_DISABLED', () => {
  test('no provider: every /auth route answers 503 AUTH_DISABLED; the dashboard says so', async () => {
    // The server's own route table answers the /auth paths while sign-in is not configured.
    const app = await startTestServer({ IPINTEL_RATE_LIMITS: 'off' });
    try {
      for (const [method, path] of [
        ['GET', '/auth/idp'],
        ['GET', '/auth/callback?code=x&state=y'],
        ['GET', '/auth/me'],
        ['GET', '/auth/tiers'],
        ['POST', '/auth/logout'],
        ['GET', '/auth/keys'],
        ['POST', '/auth/keys'],
        ['DELETE', '/auth/keys/abc'],
        ['GET', '/auth/usage'],
      ] as const) {
        const res = await fetch(`${app.url}${path}`, { method, redirect: 'manual' });
        expect(res.status).toBe(503);
        const body = await res.json() as any;
        expect(body.code).toBe('AUTH_DISABLED');
        expect(typeof body.error).toBe('string');
      }
      const dash = await fetch(`${app.url}/dashboard`);
      expect(dash.status).toBe(503);
      expect(await dash.text()).toContain('not enabled');
    } finally {
      await app.stop();
    }
  });

  test('an incomplete oidc configuration disables sign-in and names what is missing', async () => {
    const app = await startTestServer({ IPINTEL_RATE_LIMITS: 'off', IPINTEL_OAUTH_PROVIDER: 'oidc', IPINTEL_OAUTH_CLIENT_ID: 'c' });
    try {
      const res = await fetch(`${app.url}/auth/idp`, { redirect: 'manual' });
      expect(res.status).toBe(503);
      const body = await res.json() as any;
      expect(body.code).toBe('AUTH_DISABLED');
      expect(body.details.reason).toContain('IPINTEL_OAUTH_AUTHORIZE_URL');
    } finally {
      await app.stop();
    }
  });
});
