/**
 * GET /v1/assessment (spec 4.2): `ipv4` and/or `ipv6`, or the caller IP in
 * auto mode. No `fields` projection. Cache-Control per spec 4.9.
 */
import { Elysia, t } from 'elysia';
import { assessPair, assessStack } from '../../lookup/assessment.ts';
import { callerOf } from '../caller.ts';
import { ApiError } from '../../errors.ts';
import type { AppServices } from '../services.ts';
import { lookupOrThrow, scoringContextFor } from '../address-lookup.ts';
import { queryAll } from '../request-params.ts';

async function stack(s: AppServices, ip: string | undefined, family: 4 | 6, param: string) {
  if (ip === undefined) return null;
  // One serving snapshot for the whole answer, also after waiting for a proof (src/lookup/serving.ts).
  const snapshot = s.serving.snapshot;
  const hit = lookupOrThrow(s, ip, snapshot);
  if (hit.family !== family) throw new ApiError('INVALID_IP', `${param} must be an IPv${family} address`, { provided: ip, parameter: param });
  return assessStack(hit, { scoring: await scoringContextFor(s, hit, snapshot), policy: snapshot.policy });
}

/** The assessment route. */
export function assessmentRoutes(s: AppServices) {
  return new Elysia({ name: 'assessment' }).get(
    '/v1/assessment',
    async ({ request, query, set }) => {
      const q = query as Record<string, unknown>;
      for (const k of ['ipv4', 'ipv6']) {
        // Elysia's parsed query keeps only the last of a repeated key: count on the URL itself.
        const all = q[k] === undefined ? [] : queryAll(request, k);
        if (all.length > 1) throw new ApiError('INVALID_IP', `${k} must be given once`, { provided: all.join(','), parameter: k });
      }
      let ipv4 = q.ipv4 as string | undefined;
      let ipv6 = q.ipv6 as string | undefined;
      const auto = ipv4 === undefined && ipv6 === undefined;
      if (auto) {
        const ip = callerOf(request).ip;
        if (!ip) throw new ApiError('NO_CLIENT_IP', 'The caller IP address cannot be determined', {});
        if (ip.includes(':')) ipv6 = ip;
        else ipv4 = ip;
      }
      const v4 = await stack(s, ipv4, 4, 'ipv4');
      const v6 = await stack(s, ipv6, 6, 'ipv6');
      set.headers['cache-control'] = auto ? 'no-store' : 'public, max-age=86400';
      return { mode: auto ? 'auto' : 'explicit', ipv4: v4, ipv6: v6, pair: assessPair(v4, v6) };
    },
    {
      query: t.Object({ ipv4: t.Optional(t.Any()), ipv6: t.Optional(t.Any()) }, { additionalProperties: true }),
    },
  );
}
