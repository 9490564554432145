/**
 * Every route of the server, declared once: its path, its handler per
 * method, its rate-limit policy (exempt or counted; whether it reads the
 * admin token; whether a publisher serves it), whether its errors are
 * negotiated as text, whether its answers carry their own header sets, and
 * its OpenAPI operation. The router (route-table.ts),
 * the limiter's exemptions, the metrics labels, 404/405 with `Allow` and the
 * OpenAPI document's paths are all read from this list.
 *
 * A route's parameter errors are its handler's: the handler receives the
 * path segment decoded once (or raw when it does not decode) and refuses it
 * with its own code (INVALID_IP, INVALID_ASN).
 *
 * Handlers are plain functions (route-table.ts RouteHandler), made once per
 * set of services. Sign-in and the dashboard (cookies, redirects, HTML) are
 * answered by a small Elysia app mounted under the table (`MOUNTED`).
 */
import { ApiError } from '../../api-error.ts';
import { checkOAuthConfig, oauthEnabled } from '../../accounts/oauth/setup-check.ts';
import { JSON_TYPE } from '../error-response.ts';
import { openApiJson } from '../openapi/document.ts';
import { RouteTable, type RouteDeclaration, type RouteEntry, type RouteHandler } from '../route-table.ts';
import type { AppServices } from '../services.ts';
import { asnDetails } from './asn.ts';
import { assessment } from './assessment.ts';
import { verifyCrawler } from './crawler-verify.ts';
import { apiReference } from './docs.ts';
import { legacyCurrentIp, legacyIp } from './legacy.ts';
import { lookupCurrentIp, lookupIp } from './lookup.ts';
import { dataStatus, health, metrics, reload } from './ops.ts';

/** Makes a route's handler over a set of services. */
export type RouteFactory = (services: AppServices) => RouteHandler;

/** A route the mounted Elysia app answers (routes/auth.ts, routes/dashboard.ts). */
export const MOUNTED = 'mounted';

/** A declared route: a factory per method, or MOUNTED. */
export type DeclaredRoute = RouteDeclaration<RouteFactory | typeof MOUNTED>;

/**
 * Single-segment paths that browsers and crawlers ask every site for: files,
 * not addresses, so 404 NOT_FOUND rather than the legacy `/{ip}` lookup's
 * INVALID_IP, and no rate-limit token.
 */
export const NOT_ADDRESSES: readonly string[] = ['/favicon.ico', '/robots.txt'];

/** GET /openapi.json: the document of the routes declared here (the same with and without sign-in, but for its description). */
const openApiDocument: RouteFactory = (services) => {
  const oauth = oauthEnabled(services.config.oauth);
  return () => new Response(openApiDocumentText(oauth), { headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-cache' } });
};

/** Every /auth route while sign-in is not configured: 503 AUTH_DISABLED, whatever the method. */
const authDisabled: RouteFactory = (services) => {
  const checked = checkOAuthConfig(services.config.oauth);
  const reason = checked.ok ? null : checked.reason;
  return () => {
    throw new ApiError('AUTH_DISABLED', 'Sign-in is not configured on this server', { reason });
  };
};

/** The API's own routes (the order is the OpenAPI document's). */
const API: readonly DeclaredRoute[] = [
  { path: '/v1/ip/current', handlers: { GET: lookupCurrentIp }, prebuiltHeaders: true, ratesItself: true, operations: { get: 'lookupCurrentIp' } },
  { path: '/v1/ip/{ip}', handlers: { GET: lookupIp }, prebuiltHeaders: true, ratesItself: true, operations: { get: 'lookupIp' } },
  { path: '/v1/assessment', handlers: { GET: assessment }, operations: { get: 'assessment' } },
  { path: '/v1/asn/{asn}', handlers: { GET: asnDetails }, operations: { get: 'asnDetails' } },
  { path: '/asn/{asn}', handlers: { GET: asnDetails }, operations: { get: 'asnDetailsLegacy' } },
  { path: '/v1/crawler/verify', handlers: { POST: verifyCrawler }, operations: { post: 'verifyCrawler' } },
  { path: '/v1/data/status', handlers: { GET: dataStatus }, readsAdminToken: true, publisher: true, operations: { get: 'dataStatus' } },
  { path: '/health', handlers: { GET: health }, exemptFromRateLimit: true, publisher: true, operations: { get: 'health' } },
  { path: '/metrics', handlers: { GET: metrics }, exemptFromRateLimit: true, readsAdminToken: true, publisher: true, operations: { get: 'metrics' } },
  { path: '/reload', handlers: { POST: reload }, exemptFromRateLimit: true, readsAdminToken: true, operations: { post: 'reload' } },
  { path: '/openapi.json', handlers: { GET: openApiDocument }, exemptFromRateLimit: true, operations: { get: 'openApiDocument' } },
  { path: '/docs', handlers: { GET: apiReference }, exemptFromRateLimit: true, operations: { get: 'apiReference' } },
  { path: '/docs/*', handlers: { GET: apiReference }, exemptFromRateLimit: true },
];

/** Sign-in and account routes while sign-in is configured (routes/auth.ts). */
const SIGN_IN: readonly DeclaredRoute[] = [
  { path: '/auth/idp', handlers: { GET: MOUNTED }, operations: { get: 'signIn' } },
  { path: '/auth/callback', handlers: { GET: MOUNTED }, operations: { get: 'signInCallback' } },
  { path: '/auth/logout', handlers: { POST: MOUNTED }, operations: { post: 'signOut' } },
  { path: '/auth/me', handlers: { GET: MOUNTED }, operations: { get: 'me' } },
  { path: '/auth/tiers', handlers: { GET: MOUNTED }, operations: { get: 'tiers' } },
  { path: '/auth/keys', handlers: { GET: MOUNTED, POST: MOUNTED }, operations: { get: 'listKeys', post: 'createKey' } },
  { path: '/auth/keys/{id}', handlers: { DELETE: MOUNTED }, operations: { delete: 'revokeKey' } },
  { path: '/auth/usage', handlers: { GET: MOUNTED }, operations: { get: 'usage' } },
];

/** The account routes while sign-in is not configured: every /auth path answers 503 (undocumented: the document lists the routes sign-in serves). */
const NO_SIGN_IN: readonly DeclaredRoute[] = [
  { path: '/auth', handlers: { ALL: authDisabled } },
  { path: '/auth/*', handlers: { ALL: authDisabled } },
];

/** The dashboard (HTML, both with and without sign-in) and the legacy routes; `/{ip}` is the catch-all of one segment. */
const PAGES_AND_LEGACY: readonly DeclaredRoute[] = [
  { path: '/dashboard', handlers: { GET: MOUNTED }, operations: { get: 'dashboard' } },
  { path: '/', handlers: { GET: legacyCurrentIp }, textErrors: true, prebuiltHeaders: true, operations: { get: 'legacyCurrentIp' } },
  { path: '/{ip}', handlers: { GET: legacyIp }, textErrors: true, prebuiltHeaders: true, operations: { get: 'legacyIp' } },
];

const WITH_SIGN_IN = [...API, ...SIGN_IN, ...PAGES_AND_LEGACY];
const WITHOUT_SIGN_IN = [...API, ...NO_SIGN_IN, ...PAGES_AND_LEGACY];

/** The routes of a server, with or without sign-in configured. */
export function routeDeclarations(signIn: boolean): readonly DeclaredRoute[] {
  return signIn ? WITH_SIGN_IN : WITHOUT_SIGN_IN;
}

/** The OpenAPI document as served at /openapi.json. */
export function openApiDocumentText(oauth: boolean): string {
  return openApiJson({ oauth }, routeDeclarations(true));
}

/**
 * Whether a request takes no rate-limit token (and reads no API key): a
 * preflight, a route declared exempt, or a file that is no address. Exempt
 * is what must stay reachable whatever a caller's budget and does no work
 * for an anonymous client (health checks, metrics scrapes, reload, the API
 * docs); everything else counts, 404s and 405s too, so scanners are
 * limited; sign-in and account routes count, as each reads the session
 * store for any cookie a client makes up.
 */
export function takesNoToken(method: string, entry: RouteEntry<unknown> | null, path: string): boolean {
  if (method === 'OPTIONS') return true;
  return entry !== null ? entry.exemptFromRateLimit : NOT_ADDRESSES.includes(path);
}

let policyTable: RouteTable<unknown> | null = null;

/** Whether a request of this method and path (no query) takes no rate-limit token (takesNoToken, for a path not yet matched). */
export function isExemptFromRateLimit(method: string, path: string): boolean {
  policyTable ??= new RouteTable<unknown>(routeDeclarations(true), NOT_ADDRESSES);
  return takesNoToken(method, policyTable.match(path), path);
}
