/**
 * Operational routes: /health (liveness + readiness), /metrics and /reload
 * (admin), and the public /v1/data/status (spec 4.5, 4.7).
 */
import { Elysia } from 'elysia';
import { coverageOf, EVIDENCE_KINDS, type Coverage } from '../../scoring/index.ts';
import { requireAdmin } from '../admin.ts';
import { ApiError } from '../errors.ts';
import { reloadServer } from '../reload.ts';
import type { AppServices } from '../services.ts';
import { COMMON_ERRORS, errorResponses, ok } from '../openapi.ts';

/** Public capability readiness: ready, stale or unavailable per evidence kind; names only, never source paths or vendors. */
function capabilities(s: AppServices, coverage: Coverage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of EVIDENCE_KINDS) out[k] = coverage.kinds[k].state;
  out.accounts = s.config.oauth.provider ? 'ready' : 'keys_only';
  out.rdap = 'ready';
  return out;
}

/** Per evidence kind: state, how many sources, the newest one's age and the age it turns stale at (spec 4.5: kinds only). */
function coverageReport(coverage: Coverage) {
  return Object.fromEntries(
    EVIDENCE_KINDS.map((k) => {
      const c = coverage.kinds[k];
      return [k, { state: c.state, sources: c.sources, age_seconds: c.ageSeconds, stale_after_seconds: c.staleAfterSeconds }];
    }),
  );
}

/** The operational routes. */
export function opsRoutes(s: AppServices) {
  return new Elysia({ name: 'ops' })
    .get(
      '/health',
      ({ set }) => {
        set.headers['cache-control'] = 'no-store';
        // With several workers, ready only once all of them serve the same index (a reload reached every one).
        if (s.host && !s.host.agreed()) throw new ApiError('SERVICE_UNAVAILABLE', 'Workers serve different index generations (a reload is in progress or failed in some)', { what: 'generation' });
        const m = s.index.current.meta;
        return { status: 'ok', index: { loaded: true, built_at: m.builtAt, generation: s.index.generation } };
      },
      { detail: { summary: 'Liveness and readiness (200 only with an index loaded, and with several workers only when all serve the same generation)', tags: ['operations'], responses: ok('{status, index: {loaded, built_at, generation}}', { type: 'object' }) } },
    )
    .get(
      '/v1/data/status',
      ({ set }) => {
        set.headers['cache-control'] = 'public, max-age=60';
        const m = s.index.current.meta;
        const ageSeconds = Math.max(0, Math.round((s.now() - Date.parse(m.builtAt)) / 1000));
        // Ages as of this answer (the scoring's coverage is refreshed on a coarse timer instead).
        const coverage = coverageOf(m, s.now());
        return {
          status: 'ok',
          index: { built_at: m.builtAt, age_seconds: ageSeconds, loaded_at: new Date(s.index.loadedAt).toISOString() },
          capabilities: capabilities(s, coverage),
          coverage: coverageReport(coverage),
          policy_version: s.policy.current.policy_version,
          attributions: m.attributions,
        };
      },
      { detail: { summary: 'Public service status and capability readiness', tags: ['operations'], responses: { ...ok('{status, index: {built_at, age_seconds, loaded_at}, capabilities: {<kind>: ready|stale|unavailable, accounts, rdap}, coverage: {<kind>: {state, sources, age_seconds, stale_after_seconds}}, policy_version, attributions}', { type: 'object' }), ...errorResponses({ 429: COMMON_ERRORS[429] }) } } },
    )
    .get(
      '/metrics',
      async ({ request, set }) => {
        requireAdmin(request, s.config.adminToken);
        set.headers['content-type'] = 'text/plain; version=0.0.4; charset=utf-8';
        set.headers['cache-control'] = 'no-store';
        return s.host ? s.host.metricsText() : s.metrics.text();
      },
      { detail: { summary: 'Prometheus metrics (admin: Authorization: Bearer <IPINTEL_ADMIN_TOKEN>)', tags: ['operations'], security: [{ admin: [] }], responses: { 200: { description: 'Prometheus text exposition', content: { 'text/plain': { schema: { type: 'string' } } } }, ...errorResponses({ 403: 'FORBIDDEN: not the admin token' }) } } },
    )
    .post(
      '/reload',
      async ({ request, set }) => {
        requireAdmin(request, s.config.adminToken);
        set.headers['cache-control'] = 'no-store';
        return reloadServer(s);
      },
      { detail: { summary: 'Reload the index file and the decision policy (admin)', tags: ['operations'], security: [{ admin: [] }], responses: { ...ok('{reloaded, index: {built_at, v4_intervals, v6_intervals, records, size_bytes, generation}, policy_version}', { type: 'object' }), ...errorResponses({ 400: 'INVALID_REQUEST: the index file or policy was refused; the previous one keeps serving (details.what)', 403: 'FORBIDDEN: not the admin token' }) } } },
    );
}
