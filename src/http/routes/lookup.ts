/**
 * GET /v1/ip/{ip} and GET /v1/ip/current (spec 2.1, 4.1, 4.9): both answer
 * through the one pipeline (v1-pipeline.ts) and the snapshot's answerer.
 */
import { callerIpOrThrow } from '../address-lookup.ts';
import { lastSegmentParam } from '../request-params.ts';
import type { RouteHandler } from '../route-table.ts';
import type { AppServices } from '../services.ts';
import { v1PipelineOf } from '../v1-pipeline.ts';

/** GET /v1/ip/{ip}: the address is the path's last segment, decoded once. */
export function lookupIp(services: AppServices): RouteHandler {
  const pipeline = v1PipelineOf(services);
  return (request, path, hasQuery, caller, limit) => pipeline.answer(request, lastSegmentParam(path), hasQuery, caller.tier, false, limit);
}

/** GET /v1/ip/current: the caller's own address, never shared-cached. */
export function lookupCurrentIp(services: AppServices): RouteHandler {
  const pipeline = v1PipelineOf(services);
  return (request, _path, hasQuery, caller, limit) => {
    return pipeline.answer(request, callerIpOrThrow(caller.ip), hasQuery, caller.tier, true, limit);
  };
}
