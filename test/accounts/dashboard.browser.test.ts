/**
 * The dashboard in a real browser (Debian's chromium via playwright-core):
 * sign-in through the loopback mock identity provider, the first key shown
 * once with a working copy button, key creation and revocation with
 * confirmation, the usage chart, sign-out.
 * Skips (with a message) only when /usr/bin/chromium is absent and CI is unset.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startMockIdp, type MockIdp } from './helpers/mock-idp.ts';
import { oidcEnv, startTestApp, type TestApp } from './helpers/test-app.ts';

const CHROMIUM = '/usr/bin/chromium';
const runBrowser = existsSync(CHROMIUM) || !!process.env.CI;
if (!runBrowser) console.warn(`dashboard browser test skipped: ${CHROMIUM} not found (apt-get install -y chromium); it always runs when CI is set`);

let idp: MockIdp;
let app: TestApp;
let browser: Browser;

describe.skipIf(!runBrowser)('dashboard in chromium', () => {
  beforeAll(async () => {
    idp = startMockIdp();
    idp.user = { sub: 'browser-1', email: 'dana@example.test', email_verified: true, name: 'Dana <b>Tester</b>' };
    app = await startTestApp(oidcEnv(idp.url, idp.clientId, idp.clientSecret));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    idp?.stop();
  });

  const keyStatus = (key: string) => fetch(`${app.url}/v1/echo`, { headers: { 'x-api-key': key } }).then((r) => r.status);

  test('sign in, see the first key once, create and revoke a key, see usage, sign out', async () => {
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.url });
    const page: Page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });

    // Signed out: a sign-in button.
    await page.goto(`${app.url}/dashboard`);
    await page.click('#sign-in');
    await page.waitForURL(`${app.url}/dashboard`);

    // Profile (the name is shown as text, not markup) and the first key, once.
    expect(await page.textContent('#profile-name')).toBe('Dana <b>Tester</b>');
    expect(await page.textContent('#profile-tier')).toBe('free');
    const first = (await page.textContent('#secret-value'))!;
    expect(first).toMatch(/^ipi_[A-Za-z0-9_-]{43}$/);
    await page.click('#copy-secret');
    await page.locator('#copy-secret', { hasText: 'Copied' }).waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(first);
    expect(await page.locator('#keys-body tr[data-status="active"]').count()).toBe(1);
    expect(await keyStatus(first)).toBe(200);

    // Create a key: value shown once, table grows.
    await page.fill('#key-name', 'browser key');
    await page.click('#create-button');
    // Locators, not string predicates: the page's CSP (rightly) forbids eval.
    await page.locator('#keys-body tr[data-status="active"]').nth(1).waitFor();
    const second = (await page.textContent('#secret-value'))!;
    expect(second).toMatch(/^ipi_/);
    expect(second).not.toBe(first);
    expect(await page.locator('#keys-body tr', { hasText: 'browser key' }).count()).toBe(1);
    expect(await keyStatus(second)).toBe(200);

    // Revoke it: a confirmation dialog, then the key is refused at once.
    const secondId = await page.locator('#keys-body tr', { hasText: 'browser key' }).getAttribute('data-key-id');
    await page.click(`#keys-body tr[data-key-id="${secondId}"] button`);
    expect(await page.isVisible('#revoke-dialog')).toBe(true);
    await page.click('#revoke-cancel');
    expect(await keyStatus(second)).toBe(200); // cancel keeps it
    await page.click(`#keys-body tr[data-key-id="${secondId}"] button`);
    await page.click('#revoke-confirm');
    await page.waitForSelector(`#keys-body tr[data-key-id="${secondId}"][data-status="revoked"]`);
    const refused = await fetch(`${app.url}/v1/echo`, { headers: { 'x-api-key': second } });
    expect(refused.status).toBe(401);
    expect((await refused.json() as any).code).toBe('INVALID_API_KEY');

    // Usage: requests with the first key show in the totals and the chart after a reload; the first key is not shown again.
    for (let i = 0; i < 4; i++) await keyStatus(first);
    await page.reload();
    expect(await page.isHidden('#secret-box')).toBe(true);
    expect(await page.content()).not.toContain(first);
    // first key: 1 check + 4; second key: 2 checks before revocation (the refused one is not counted).
    expect(await page.textContent('#stat-hour')).toBe('7');
    const tallest = await page.evaluate<number>(`Math.max(...[...document.querySelectorAll('#chart rect')].map((r) => Number(r.getAttribute('height'))))`);
    expect(tallest).toBeGreaterThan(0);
    expect(await page.locator('#chart rect').count()).toBe(24);

    // Sign out: back to the sign-in button; the session is gone server-side.
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in');
    // No script, CSP or network errors along the whole walk (before the deliberate 401 probe below).
    expect(problems).toEqual([]);
    const me = await page.evaluate<number>(`fetch('/auth/me').then((r) => r.status)`);
    expect(me).toBe(401);
    await context.close();
  }, 60_000);
});
