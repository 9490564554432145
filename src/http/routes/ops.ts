/**
 * Operational routes: /health (liveness + readiness), /metrics and /reload
 * (admin), and the public /v1/data/status (spec 4.5, 4.7).
 */
import { coverageOf, EVIDENCE_KINDS, type Coverage } from '../../scoring/index.ts';
import { isAdmin, requireAdmin } from '../admin.ts';
import { adminFeedsView, adminRefreshView, publicFeedsView } from '../../feeds/status-view.ts';
import { loadSwapSummaries, swapSummariesPath } from '../../feeds/swap-summary.ts';
import { ApiError } from '../../api-error.ts';
import { reloadServer } from '../reload-server.ts';
import { readPullStatus } from '../../index/pull/pull-status-file.ts';
import { readPublishFigures } from '../../index/publish/publish-figures.ts';
import type { HistoryStatus } from '../../index/history/past-indexes.ts';
import { expiresAt, isExpired } from '../../index/publish/manifest-window.ts';
import { resolve } from 'node:path';
import type { AppServices } from '../services.ts';
import { jsonResponse } from '../json-response.ts';
import type { RouteHandler } from '../route-table.ts';

/** Public capability readiness: ready, stale or unavailable per evidence kind; names only, never source paths or vendors. */
function capabilities(services: AppServices, coverage: Coverage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of EVIDENCE_KINDS) out[k] = coverage.kinds[k].state;
  out.accounts = services.config.oauth.provider ? 'ready' : 'keys_only';
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

/** The puller's state as the status route shows it (the URL and last error for the admin only). */
function pullView(indexPath: string, admin: boolean, now: number) {
  const p = readPullStatus(resolve(indexPath));
  const expires = p?.expires_at ?? null;
  return {
    last_check: p?.last_check ?? null,
    last_change: p?.last_change ?? null,
    next_check: p?.next_check ?? null,
    consecutive_failures: p?.consecutive_failures ?? 0,
    sha256: p?.sha256 ?? null,
    expires_at: expires,
    expired: expires !== null && now > Date.parse(expires),
    ...(admin
      ? {
          url: p?.url ?? '',
          last_error: p?.last_error ?? null,
          last_error_at: p?.last_error_at ?? null,
          last_transfer: p?.last_transfer ?? null,
          downloaded_bytes: p?.downloaded_bytes ?? { delta: 0, compressed: 0, plain: 0 },
        }
      : {}),
  };
}

/** GET /health: ready while this process (and, with several workers, every worker) serves one index generation, and a pulled index is within IPINTEL_INDEX_MAX_AGE. */
export function health(services: AppServices): RouteHandler {
  return () => {
    // With several workers, ready only once all of them serve the same index (a reload reached every one).
    if (services.host && !services.host.agreed()) throw new ApiError('SERVICE_UNAVAILABLE', 'Workers serve different index generations (a reload is in progress or failed in some)', { what: 'generation' });
    const m = services.index.current.meta;
    const pull = services.config.pull;
    // Past its maximum age a pulled index is no longer believed current: not ready, so probes and load balancers say so.
    if (pull && isExpired(m.builtAt, services.now(), pull.maxAgeMs)) {
      throw new ApiError('SERVICE_UNAVAILABLE', `The served index was built ${m.builtAt} and is past IPINTEL_INDEX_MAX_AGE: no newer verified publish has arrived`, {
        what: 'index_expired',
        expired_at: expiresAt(m.builtAt, pull.maxAgeMs),
      });
    }
    return jsonResponse({ status: 'ok', index: { loaded: true, built_at: m.builtAt, generation: services.index.generation } }, { 'cache-control': 'no-store' });
  };
}

/** The history's status: the error's text (it names files) for the admin token only; a puller's refusal of its publisher's history is one. */
function historyView(s: HistoryStatus, admin: boolean, indexPath: string | null) {
  const refused = indexPath ? readPullStatus(resolve(indexPath))?.history?.last_error : null;
  return {
    retention_seconds: Math.round(s.retention_ms / 1000),
    from: s.from,
    to: s.to,
    versions: s.versions,
    size_bytes: s.size_bytes,
    readable: s.readable,
    ...(admin ? { error: s.error ?? (refused ? `the publisher's history was refused (the previous history stays): ${refused}` : null) } : {}),
  };
}

/** GET /v1/data/status: public readiness; per-source detail for the admin token. */
export function dataStatus(services: AppServices): RouteHandler {
  return (request) => {
    // The admin's answer adds per-source detail: never cached for others.
    const adminCaller = isAdmin(request, services.config.adminToken);
    const admin = services.feeds !== undefined && adminCaller;
    const m = services.index.current.meta;
    const now = services.now();
    const ageSeconds = Math.max(0, Math.round((now - Date.parse(m.builtAt)) / 1000));
    // Ages as of this answer (the scoring's coverage is refreshed on a coarse timer instead).
    const coverage = coverageOf(m, now);
    const body = {
      status: 'ok',
      index: {
        built_at: m.builtAt,
        age_seconds: ageSeconds,
        loaded_at: new Date(services.index.loadedAt).toISOString(),
        source: services.config.pull ? ('pull' as const) : ('local' as const),
        ...(services.config.pull ? { pull: pullView(services.config.indexPath, adminCaller, now) } : {}),
        ...(services.config.publish && adminCaller ? { publish: readPublishFigures(resolve(services.config.publish.dir)) } : {}),
      },
      capabilities: capabilities(services, coverage),
      coverage: coverageReport(coverage),
      feeds: services.feeds
        ? {
            ...publicFeedsView(services.feeds, now),
            ...(admin ? { sources: adminFeedsView(services.feeds, now), ...adminRefreshView(services.feeds), swaps: loadSwapSummaries(swapSummariesPath(services.config.indexPath)) } : {}),
          }
        : null,
      policy_version: services.policy.current.policy_version,
      attributions: m.attributions,
      ...(services.history ? { history: historyView(services.history.status(now), adminCaller, services.config.pull ? services.config.indexPath : null) } : {}),
    };
    return jsonResponse(body, { 'cache-control': adminCaller ? 'no-store' : 'public, max-age=60', vary: 'authorization' });
  };
}

/** GET /metrics (admin): the Prometheus exposition, the host's totals with several workers. */
export function metrics(services: AppServices): RouteHandler {
  return async (request) => {
    requireAdmin(request, services.config.adminToken);
    const text = services.host ? await services.host.metricsText() : await services.metrics.text();
    return new Response(text, { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' } });
  };
}

/** POST /reload (admin): maps, verifies and swaps in the index file and the policy. */
export function reload(services: AppServices): RouteHandler {
  return async (request) => {
    requireAdmin(request, services.config.adminToken);
    return jsonResponse(await reloadServer(services), { 'cache-control': 'no-store' });
  };
}
