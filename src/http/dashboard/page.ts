/** Pure: the dashboard's HTML for signed-in and signed-out visitors. */
import { DASHBOARD_SCRIPT } from './client.ts';
import { embedJson, escapeHtml, layout } from './html.ts';
import type { KeyView } from '../../accounts/views.ts';
import type { UsageReport } from '../../accounts/usage-report.ts';

export interface DashboardState {
  user: { id: string; email: string | null; name: string | null; tier: string; created_at: string };
  requestsPerMinute: number;
  keys: KeyView[];
  usage: UsageReport;
  /** The first key's secret, present on exactly one page view. */
  revealed: string | null;
}

/** The page of a signed-in user. */
export function renderDashboard(state: DashboardState, nonce: string): string {
  const u = state.user;
  const who = u.name ?? u.email ?? 'your account';
  const body = `
<section class="card" id="profile">
  <h2>Profile</h2>
  <div class="row"><strong id="profile-name">${escapeHtml(who)}</strong>
  <span class="badge ${u.tier === 'pro' ? 'pro' : ''}" id="profile-tier">${escapeHtml(u.tier)}</span></div>
  <div class="muted" id="profile-email">${escapeHtml(u.email ?? 'no verified email')}</div>
  <div class="muted">Tier limit: ${state.requestsPerMinute} requests per minute. Member since ${escapeHtml(u.created_at.slice(0, 10))}.</div>
</section>
<section class="card">
  <h2>API keys</h2>
  <p class="muted">Send a key in the <code>X-API-Key</code> header.</p>
  <div class="secret" id="secret-box" hidden></div>
  <table><thead><tr><th>Prefix</th><th>Name</th><th>Tier</th><th>Created</th><th>Last used</th><th></th></tr></thead>
  <tbody id="keys-body"></tbody></table>
  <form id="create-form" class="row spaced">
    <input id="key-name" name="name" maxlength="64" placeholder="Key name (optional)" aria-label="Key name">
    <button id="create-button" type="submit">Create key</button>
    <span class="error" id="create-error" role="alert"></span>
  </form>
</section>
<section class="card">
  <h2>Usage</h2>
  <div class="stats"><div><b id="stat-hour">0</b><span class="muted">last hour</span></div>
  <div><b id="stat-day">0</b><span class="muted">last 24 hours</span></div>
  <div><b id="stat-month">0</b><span class="muted">last 30 days</span></div></div>
  <div class="muted spaced">Requests per hour, last 24 hours</div>
  <svg id="chart" class="chart" viewBox="0 0 960 140" preserveAspectRatio="none" role="img" aria-label="Requests per hour, last 24 hours"></svg>
</section>
<dialog id="revoke-dialog">
  <h2>Revoke key?</h2>
  <p>Requests with <strong id="revoke-name"></strong> will be refused immediately. This cannot be undone.</p>
  <p class="error" id="revoke-error" role="alert"></p>
  <div class="row"><button id="revoke-confirm" class="danger" type="button">Revoke</button>
  <button id="revoke-cancel" class="secondary" type="button">Cancel</button></div>
</dialog>
<script type="application/json" id="state">${embedJson({ keys: state.keys, usage: state.usage, revealed: state.revealed })}</script>
<script nonce="${nonce}">${DASHBOARD_SCRIPT}</script>`;
  return layout('ipintel dashboard', body, nonce, '<button id="sign-out" class="secondary" type="button">Sign out</button>');
}

/** The page of a visitor without a session. */
export function renderSignedOut(nonce: string): string {
  const body = `<div class="card center"><h2>Sign in to ipintel</h2>
<p class="muted">Sign in to get a free API key (200 requests per minute), manage your keys and see your usage.</p>
<p class="row centered"><a class="button" id="sign-in" href="/auth/idp">Sign in</a></p></div>`;
  return layout('Sign in · ipintel', body, nonce);
}

/** The page shown when sign-in is not configured. */
export function renderAuthDisabled(nonce: string): string {
  const body = `<div class="card center"><h2>Accounts are not enabled</h2>
<p class="muted">This server has no identity provider configured. Anonymous lookups still work.</p></div>`;
  return layout('ipintel', body, nonce);
}
