/**
 * /docs in a real browser (Debian's chromium via playwright-core) with every
 * request that is not to this server refused: the reference renders the
 * operations of /openapi.json offline, /docs/ too, and the page's CSP and
 * integrity attributes hold (no console errors, no blocked resources).
 * Skips (with a message) only when /usr/bin/chromium is absent and CI is unset.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';

const CHROMIUM = '/usr/bin/chromium';
const runBrowser = existsSync(CHROMIUM) || !!process.env.CI;
if (!runBrowser) console.warn(`docs browser test skipped: ${CHROMIUM} not found (apt-get install -y chromium); it always runs when CI is set`);

let server: RunningServer;
let browser: Browser;

describe.skipIf(!runBrowser)('/docs in chromium, offline', () => {
  beforeAll(async () => {
    server = await startTestServer({ IPINTEL_RATE_LIMITS: 'off' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  for (const path of ['/docs', '/docs/']) {
    test(`${path} renders the reference from this server alone`, async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const offsite: string[] = [];
      const problems: string[] = [];
      // Offline: anything not to this server is refused (and recorded).
      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(server.url + '/')) return route.continue();
        offsite.push(url);
        return route.abort('internetdisconnected');
      });
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));

      const res = await page.goto(`${server.url}${path}`);
      expect(res?.status()).toBe(200);
      expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
      // The operations of the document are listed, with the lookup route among them.
      await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });
      const paths = await page.$$eval('.opblock-summary-path', (els) => els.map((e) => e.getAttribute('data-path') ?? e.textContent ?? ''));
      expect(paths).toEqual(expect.arrayContaining(['/v1/ip/{ip}', '/v1/asn/{asn}', '/v1/crawler/verify']));
      expect(await page.textContent('.info .title')).toContain('ipintel');
      // Every script and stylesheet is same-origin and pinned by its hash.
      const resources = await page.$$eval('script[src], link[rel=stylesheet]', (els) =>
        els.map((e) => ({ url: new URL(e.getAttribute('src') ?? e.getAttribute('href') ?? '', (globalThis as unknown as { location: { href: string } }).location.href).href, integrity: e.getAttribute('integrity') ?? '' })),
      );
      expect(resources.length).toBe(3);
      for (const r of resources) {
        expect(r.url.startsWith(server.url + '/docs/')).toBe(true);
        expect(r.integrity).toMatch(/^sha384-[A-Za-z0-9+/]+=*$/);
      }
      expect(offsite).toEqual([]);
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);
  }

  test('a script whose bytes differ from the pinned hash does not run', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await context.route('**/docs/swagger-ui-bundle.js', (route) => route.fulfill({ status: 200, contentType: 'text/javascript', body: 'window.tampered = true;' }));
    await page.goto(`${server.url}/docs`);
    await page.waitForLoadState('load');
    expect(await page.evaluate(() => (globalThis as { tampered?: boolean }).tampered ?? false)).toBe(false);
    expect(await page.$('.opblock-summary-path')).toBeNull();
    await context.close();
  }, 60_000);
});
