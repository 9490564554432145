/** GET /dashboard: the signed-in user's profile, keys and usage, or a sign-in button. */
import { Elysia } from 'elysia';
import type { Config } from '../../config.ts';
import type { AccountStore } from '../../accounts/store.ts';
import { oauthEnabled } from '../../accounts/oauth/setup-check.ts';
import { sessionOfRequest } from '../../accounts/web/session-context.ts';
import { keyView, userView } from '../../accounts/views.ts';
import { TIERS } from '../../tiers.ts';
import { htmlHeaders, newNonce } from '../dashboard/html.ts';
import { renderAuthDisabled, renderDashboard, renderSignedOut } from '../dashboard/page.ts';

export interface DashboardRouteDeps {
  config: Config;
  accounts: AccountStore;
  now?: () => number;
}

/** The /dashboard plugin. */
export function dashboardRoutes(deps: DashboardRouteDeps): Elysia {
  const { accounts, config } = deps;
  const now = deps.now ?? Date.now;
  const enabled = oauthEnabled(config.oauth);
  return new Elysia().get('/dashboard', async ({ request }) => {
    const nonce = newNonce();
    const headers = new Headers(htmlHeaders(nonce));
    if (!enabled) return new Response(renderAuthDisabled(nonce), { status: 503, headers });
    const s = await sessionOfRequest(request, accounts, config.oauth.redirectUri, now());
    if (!s) return new Response(renderSignedOut(nonce), { status: 200, headers });
    for (const c of s.setCookies) headers.append('set-cookie', c);
    const user = s.session.user;
    const html = renderDashboard(
      {
        user: userView(user),
        requestsPerMinute: TIERS[user.tier].requestsPerMinute,
        keys: (await accounts.listKeys(user.id)).map(keyView),
        usage: await accounts.usageReport(user.id),
        revealed: await accounts.takeKeyForReveal(s.token),
      },
      nonce,
    );
    return new Response(html, { status: 200, headers });
  }) as unknown as Elysia;
}
