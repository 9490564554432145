/**
 * GET /v1/assessment (spec 4.2): `ipv4` and/or `ipv6`, or the caller IP in
 * auto mode. No `fields` projection. Cache-Control per spec 4.9.
 */
import { assessPair } from '../../lookup/assessment.ts';
import { ApiError } from '../../api-error.ts';
import type { LiveSources } from '../../lookup/answerer.ts';
import type { AppServices } from '../services.ts';
import { callerIpOrThrow, liveSourcesOf, lookupOrThrow } from '../address-lookup.ts';
import { jsonResponse } from '../json-response.ts';
import { queryValues } from '../request-params.ts';
import type { RouteHandler } from '../route-table.ts';
import { atOf, pastMomentOf, pastResponse } from '../past-answer.ts';
import { withAsOf, type PastMoment } from '../../lookup/past-moment.ts';

/** The query parameters of an assessment (spec 4.2). */
const ASSESSMENT_KEYS = ['ipv4', 'ipv6'] as const;

async function stack(services: AppServices, live: LiveSources, ip: string | undefined, family: 4 | 6, param: string, moment: PastMoment | null) {
  if (ip === undefined) return null;
  // One serving snapshot for the whole answer, also after waiting for a proof (src/lookup/serving.ts); a past moment's own.
  const snapshot = moment?.snapshot ?? services.serving.snapshot;
  const hit = lookupOrThrow(services, ip, snapshot);
  if (hit.family !== family) throw new ApiError('INVALID_IP', `${param} must be an IPv${family} address`, { provided: ip, parameter: param });
  // A past answer has no live crawler proof (past-answer.ts, NOT_HISTORICAL).
  return await snapshot.answers.assessment(hit, moment ? null : live);
}

/** The assessment answer. */
export function assessment(services: AppServices): RouteHandler {
  const live = liveSourcesOf(services);
  return async (request, _path, hasQuery, caller) => {
    const at = hasQuery ? atOf(request.url) : null;
    const moment = at === null ? null : await pastMomentOf(services, at, caller.tier);
    const values = queryValues(request.url, ASSESSMENT_KEYS);
    const given: Record<'ipv4' | 'ipv6', string | undefined> = { ipv4: undefined, ipv6: undefined };
    for (let i = 0; i < ASSESSMENT_KEYS.length; i++) {
      const k = ASSESSMENT_KEYS[i];
      const all = values[i] ?? [];
      if (all.length > 1) throw new ApiError('INVALID_IP', `${k} must be given once`, { provided: all.join(','), parameter: k });
      given[k] = all[0];
    }
    let { ipv4, ipv6 } = given;
    const auto = ipv4 === undefined && ipv6 === undefined;
    if (auto) {
      const ip = callerIpOrThrow(caller.ip);
      if (ip.includes(':')) ipv6 = ip;
      else ipv4 = ip;
    }
    const v4 = await stack(services, live, ipv4, 4, 'ipv4', moment);
    const v6 = await stack(services, live, ipv6, 6, 'ipv6', moment);
    const answer = { mode: auto ? 'auto' : 'explicit', ipv4: v4, ipv6: v6, pair: assessPair(v4, v6) };
    if (moment) return pastResponse(request, withAsOf(JSON.stringify(answer), moment), moment, !auto);
    return jsonResponse(answer, { 'cache-control': auto ? 'no-store' : 'public, max-age=86400' });
  };
}
