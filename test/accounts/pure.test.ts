/** Pure helpers: profile parsing, cookies, origin check, body checks, usage batching and reports, HTML escaping. */
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { profileFromGithub, profileFromOidc } from '../../src/accounts/oauth/profiles.ts';
import { isSecureContext, readCookie, serializeCookie } from '../../src/accounts/web/cookies.ts';
import { isSameOriginRequest } from '../../src/accounts/web/origin.ts';
import { parseCreateKeyBody } from '../../src/accounts/web/create-key-body.ts';
import { UsageCounter, toBatch } from '../../src/accounts/usage-counter.ts';
import { buildUsageReport } from '../../src/accounts/usage-report.ts';
import { displayPrefix, generateApiKey, isApiKeyShaped, secretsEqual } from '../../src/accounts/secrets.ts';
import { checkEmail } from '../../src/accounts/validation.ts';
import { embedJson, escapeHtml } from '../../src/http/dashboard/html.ts';

describe('profiles', () => {
  test('oidc: sub required, email normalised, email_verified honoured', () => {
    expect(profileFromOidc('oidc', { sub: 'a', email: ' A@B.Test ', name: 'N' })).toEqual({
      ok: true,
      value: { provider: 'oidc', subject: 'a', email: 'a@b.test', emailVerified: true, name: 'N' },
    });
    const unverified = profileFromOidc('google', { sub: 'a', email: 'a@b.test', email_verified: false });
    expect(unverified.ok && unverified.value.emailVerified).toBe(false);
    for (const bad of [null, [], 'x', {}, { sub: '' }, { sub: 5.5 }, { sub: 'x'.repeat(300) }]) expect(profileFromOidc('oidc', bad).ok).toBe(false);
    const noEmail = profileFromOidc('oidc', { sub: 's', email: 'not an email' });
    expect(noEmail.ok && noEmail.value).toMatchObject({ email: null, emailVerified: false });
  });

  test('github: numeric id, primary verified email, login as fallback name', () => {
    const p = profileFromGithub({ id: 7, login: 'octo', name: null }, [
      { email: 'old@x.test', primary: false, verified: true },
      { email: 'main@x.test', primary: true, verified: true },
    ]);
    expect(p).toEqual({ ok: true, value: { provider: 'github', subject: '7', email: 'main@x.test', emailVerified: true, name: 'octo' } });
    const none = profileFromGithub({ id: 7, login: 'octo' }, [{ email: 'u@x.test', primary: true, verified: false }]);
    expect(none.ok && none.value.email).toBeNull();
    expect(profileFromGithub({ login: 'no-id' }, []).ok).toBe(false);
  });
});

describe('cookies and origin', () => {
  test('read and write cookies', () => {
    expect(readCookie('a=1; ipintel_session=abc%3D; b=2', 'ipintel_session')).toBe('abc=');
    expect(readCookie('a=1', 'ipintel_session')).toBeNull();
    expect(readCookie('ipintel_session=%E0%A4%A', 'ipintel_session')).toBeNull();
    expect(readCookie(null, 'x')).toBeNull();
    const c = serializeCookie('s', 'v', { path: '/', maxAge: 60, secure: true });
    expect(c).toBe('s=v; Path=/; Max-Age=60; HttpOnly; SameSite=Lax; Secure');
    expect(serializeCookie('s', '', { path: '/', maxAge: 0, secure: false })).toContain('Max-Age=0');
    expect(isSecureContext('https://a/x', null)).toBe(true);
    expect(isSecureContext('http://a/x', 'https://pub.example/auth/callback')).toBe(true);
    expect(isSecureContext('http://a/x', 'http://a/auth/callback')).toBe(false);
  });

  test('same-origin check', () => {
    const h = (o: Record<string, string>) => new Headers(o);
    expect(isSameOriginRequest(h({}), 'http://127.0.0.1:9/x', null)).toBe(true);
    expect(isSameOriginRequest(h({ origin: 'http://127.0.0.1:9' }), 'http://127.0.0.1:9/x', null)).toBe(true);
    expect(isSameOriginRequest(h({ origin: 'https://pub.example' }), 'http://10.0.0.1/x', 'https://pub.example/auth/callback')).toBe(true);
    expect(isSameOriginRequest(h({ origin: 'https://evil.example' }), 'http://127.0.0.1:9/x', null)).toBe(false);
    expect(isSameOriginRequest(h({ origin: 'null' }), 'http://127.0.0.1:9/x', null)).toBe(false);
    expect(isSameOriginRequest(h({ 'sec-fetch-site': 'cross-site' }), 'http://127.0.0.1:9/x', null)).toBe(false);
  });
});

describe('create-key body', () => {
  test('accepts empty and valid bodies, rejects the rest', () => {
    expect(parseCreateKeyBody(null, '')).toEqual({ ok: true, value: { name: null, tier: null } });
    expect(parseCreateKeyBody('application/json; charset=utf-8', '{"name":" ci ","tier":"free"}')).toEqual({ ok: true, value: { name: 'ci', tier: 'free' } });
    const bad = parseCreateKeyBody('application/json', '{"name":"ok","extra":1}');
    expect(bad.ok === false && bad.details).toEqual({ unknown_fields: ['extra'], allowed_fields: ['name', 'tier'] });
    expect(parseCreateKeyBody('text/plain', '{}').ok).toBe(false);
  });
});

describe('secrets', () => {
  test('key format, prefix and constant-time comparison', () => {
    const k = generateApiKey();
    expect(isApiKeyShaped(k)).toBe(true);
    expect(displayPrefix(k)).toBe(k.slice(0, 12));
    expect(generateApiKey()).not.toBe(k);
    expect(secretsEqual('abc', 'abc')).toBe(true);
    expect(secretsEqual('abc', 'abd')).toBe(false);
    expect(secretsEqual('abc', 'abcd')).toBe(false);
    expect(checkEmail('a@b').ok).toBe(true);
    expect(checkEmail('a b@c').ok).toBe(false);
  });
});

describe('usage', () => {
  test('counter batches per minute and per day, and restores after failure', () => {
    const c = new UsageCounter();
    const t = Date.UTC(2026, 0, 1, 23, 59, 30);
    c.record('k', t);
    c.record('k', t + 10_000);
    c.record('k', t + 40_000); // next minute, next day
    c.record('j', t);
    const batch = c.drain();
    expect(c.isEmpty()).toBe(true);
    expect(batch.minutes).toHaveLength(3);
    expect(batch.days.find((d) => d.keyId === 'k' && d.day === Date.UTC(2026, 0, 1))!.count).toBe(2);
    expect(batch.days.find((d) => d.keyId === 'k' && d.day === Date.UTC(2026, 0, 2))!.count).toBe(1);
    expect(batch.lastUsed).toContainEqual({ keyId: 'k', at: t + 40_000 });
    c.restore(batch);
    expect(toBatch(new Map([['k', c.pendingOf('k')]]), new Map()).minutes.reduce((a, m) => a + m.count, 0)).toBe(3);
  });

  test('report buckets end at now', () => {
    const now = Date.UTC(2026, 0, 5, 10, 30);
    const key = { id: 'k', userId: 'u', name: 'n', prefix: 'ipi_x', tier: 'free' as const, createdAt: 0, lastUsedAt: null, revokedAt: null };
    const r = buildUsageReport([key], new Map([['k', new Map([[Date.UTC(2026, 0, 5, 10, 30), 4], [Date.UTC(2026, 0, 5, 8, 0), 2]])]]), new Map([['k', new Map([[Date.UTC(2026, 0, 5), 6], [Date.UTC(2025, 11, 1), 100]])]]), now);
    expect(r.keys[0]!.per_minute.at(-1)).toEqual({ start: '2026-01-05T10:30:00.000Z', count: 4 });
    expect(r.keys[0]!.per_hour.at(-3)).toEqual({ start: '2026-01-05T08:00:00.000Z', count: 2 });
    expect(r.keys[0]!.totals).toEqual({ last_hour: 4, last_24h: 6, last_30d: 6 });
  });
});

describe('html', () => {
  test('escaping and JSON embedding cannot break out of markup', () => {
    expect(escapeHtml(`<img src=x onerror="a('b')">&`)).toBe('&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;');
    const embedded = embedJson({ name: '</script><script>alert(1)</script>' });
    expect(embedded).not.toContain('</script>');
    expect(JSON.parse(embedded).name).toBe('</script><script>alert(1)</script>');
  });
});
