/**
 * Operational routes: /health (liveness + readiness), /metrics and /reload
 * (admin), and the public /v1/data/status (spec 4.5, 4.7).
 */
import { Elysia } from 'elysia';
import { IndexFileError } from '../../index/index-file.ts';
import { loadPolicy, PolicyError } from '../../scoring/index.ts';
import { requireAdmin } from '../admin.ts';
import { ApiError } from '../errors.ts';
import type { AppServices } from '../services.ts';
import { COMMON_ERRORS, errorResponses, ok } from '../openapi.ts';

/** Public capability readiness: names only, never source paths or vendors. */
function capabilities(s: AppServices) {
  const c = s.index.current.meta.capabilities;
  const state = (ready: boolean | undefined) => (ready ? 'ready' : 'unavailable');
  return {
    geolocation: state(c.geolocation),
    asn: state(c.asn),
    allocation: state(c.allocation),
    routing: state(c.routing),
    rpki: state(c.rpki),
    crawlers: state(c.crawlers),
    datacenter: state(c.datacenter),
    vpn: state(c.vpn),
    tor: state(c.tor),
    relays: state(c.relays),
    threat: state(c.threat),
    bogons: state(c.bogons),
    network_type: state(c.network_type),
    accounts: s.config.oauth.provider ? 'ready' : 'keys_only',
    rdap: 'ready',
  };
}

/** The operational routes. */
export function opsRoutes(s: AppServices) {
  return new Elysia({ name: 'ops' })
    .get(
      '/health',
      ({ set }) => {
        set.headers['cache-control'] = 'no-store';
        const m = s.index.current.meta;
        return { status: 'ok', index: { loaded: true, built_at: m.builtAt, generation: s.index.generation } };
      },
      { detail: { summary: 'Liveness and readiness (200 only with an index loaded)', tags: ['operations'], responses: ok('{status, index: {loaded, built_at, generation}}', { type: 'object' }) } },
    )
    .get(
      '/v1/data/status',
      ({ set }) => {
        set.headers['cache-control'] = 'public, max-age=60';
        const m = s.index.current.meta;
        const ageSeconds = Math.max(0, Math.round((s.now() - Date.parse(m.builtAt)) / 1000));
        return {
          status: 'ok',
          index: { built_at: m.builtAt, age_seconds: ageSeconds, loaded_at: new Date(s.index.loadedAt).toISOString() },
          capabilities: capabilities(s),
          policy_version: s.policy.current.policy_version,
          attributions: m.attributions,
        };
      },
      { detail: { summary: 'Public service status and capability readiness', tags: ['operations'], responses: { ...ok('{status, index: {built_at, age_seconds, loaded_at}, capabilities: {<name>: ready|unavailable}, policy_version, attributions}', { type: 'object' }), ...errorResponses({ 429: COMMON_ERRORS[429] }) } } },
    )
    .get(
      '/metrics',
      async ({ request, set }) => {
        requireAdmin(request, s.config.adminToken);
        set.headers['content-type'] = 'text/plain; version=0.0.4; charset=utf-8';
        set.headers['cache-control'] = 'no-store';
        return s.metrics.text();
      },
      { detail: { summary: 'Prometheus metrics (admin: Authorization: Bearer <IPINTEL_ADMIN_TOKEN>)', tags: ['operations'], security: [{ admin: [] }], responses: { 200: { description: 'Prometheus text exposition', content: { 'text/plain': { schema: { type: 'string' } } } }, ...errorResponses({ 403: 'FORBIDDEN: not the admin token' }) } } },
    )
    .post(
      '/reload',
      async ({ request, set }) => {
        requireAdmin(request, s.config.adminToken);
        set.headers['cache-control'] = 'no-store';
        // Load both first; swap only when both are good, so a bad file changes nothing.
        let policy = s.policy.current;
        try {
          if (s.policy.path) policy = await loadPolicy(s.policy.path);
        } catch (e) {
          throw new ApiError('INVALID_REQUEST', `Policy refused, nothing reloaded: ${(e as PolicyError).message}`, { what: 'policy' });
        }
        let index;
        try {
          index = s.index.reload();
        } catch (e) {
          if (e instanceof IndexFileError) throw new ApiError('INVALID_REQUEST', `Index refused, the previous index keeps serving: ${e.reason}`, { what: 'index' });
          throw e;
        }
        s.policy.current = policy;
        return {
          reloaded: true,
          index: { built_at: index.builtAt, v4_intervals: index.v4Intervals, v6_intervals: index.v6Intervals, records: index.records, size_bytes: index.sizeBytes, generation: index.generation },
          policy_version: policy.policy_version,
        };
      },
      { detail: { summary: 'Reload the index file and the decision policy (admin)', tags: ['operations'], security: [{ admin: [] }], responses: { ...ok('{reloaded, index: {built_at, v4_intervals, v6_intervals, records, size_bytes, generation}, policy_version}', { type: 'object' }), ...errorResponses({ 400: 'INVALID_REQUEST: the index file or policy was refused; the previous one keeps serving (details.what)', 403: 'FORBIDDEN: not the admin token' }) } } },
    );
}
