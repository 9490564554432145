/**
 * GET /v1/asn/{asn} and its alias GET /asn/{asn} (spec 2.5, 4.4): local
 * name, threat density computed at build time, ASN-DROP context, and the
 * optional radar enrichment (null when unset or failing).
 */
import { asnObject, invalidAsn, parseAsn } from '../../lookup/asn.ts';
import type { AppServices } from '../services.ts';
import { lastSegmentParam } from '../request-params.ts';
import { bucketKeyFor } from '../ratelimit/index.ts';
import { jsonResponse } from '../json-response.ts';
import type { RouteHandler } from '../route-table.ts';

const ASN_CACHE = { 'cache-control': 'public, max-age=43200' };

/** The ASN answer (identical bodies and headers on both paths). */
export function asnDetails(services: AppServices): RouteHandler {
  return async (_request, path, _hasQuery, caller) => {
    const raw = lastSegmentParam(path);
    const asn = parseAsn(raw);
    if (asn === null) throw invalidAsn(raw);
    // One serving snapshot for the whole answer, read before waiting for radar.
    const snapshot = services.serving.snapshot;
    const radar = await services.radar.lookup(asn, bucketKeyFor(caller));
    return jsonResponse(asnObject(asn, snapshot.reader.asnDetails(asn), radar, snapshot.coverage), ASN_CACHE);
  };
}
