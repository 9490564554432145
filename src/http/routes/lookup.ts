/**
 * GET /v1/ip/current and GET /v1/ip/{ip} (spec 2.1, 4.1, 4.9) as Elysia
 * routes: their declaration (OpenAPI, the route table) and the entrance for
 * requests that reach the app. Both answer through the one pipeline
 * (v1-pipeline.ts), which the request wrapper also calls directly.
 */
import { Elysia, t } from 'elysia';
import { ApiError } from '../../errors.ts';
import { callerOf } from '../caller.ts';
import { pathParam } from '../request-params.ts';
import type { AppServices } from '../services.ts';
import { v1PipelineOf } from '../v1-pipeline.ts';

const query = t.Object({ fields: t.Optional(t.Any()), include: t.Optional(t.Any()) }, { additionalProperties: true });

/** The v1 lookup routes. */
export function lookupRoutes(s: AppServices) {
  const pipeline = v1PipelineOf(s);
  return new Elysia({ name: 'lookup' })
    .get(
      '/v1/ip/current',
      ({ request }) => {
        const caller = callerOf(request);
        if (!caller.ip) throw new ApiError('NO_CLIENT_IP', 'The caller IP address cannot be determined', {});
        return pipeline.answer(request, caller.ip, request.url.includes('?'), caller.tier, true);
      },
      { query },
    )
    .get('/v1/ip/:ip', ({ params, request }) => pipeline.answer(request, pathParam(params.ip, request), request.url.includes('?'), callerOf(request).tier, false), {
      query,
      params: t.Object({ ip: t.String({ description: 'IPv4 or IPv6 address' }) }),
    });
}
