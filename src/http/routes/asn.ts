/**
 * GET /v1/asn/{asn} and its alias GET /asn/{asn} (spec 2.5, 4.4): local
 * name, threat density computed at build time, ASN-DROP context, and the
 * optional radar enrichment (null when unset or failing).
 */
import { Elysia, t } from 'elysia';
import { asnObject, invalidAsn, parseAsn } from '../../lookup/asn.ts';
import type { AppServices } from '../services.ts';
import { pathParam } from '../request-params.ts';
import { callerOf } from '../caller.ts';
import { bucketKeyFor } from '../ratelimit/index.ts';

/** The ASN routes (identical bodies on both paths). */
export function asnRoutes(s: AppServices) {
  const handler = async ({ params, request, set }: { params: { asn: string }; request: Request; set: { headers: Record<string, string | number> } }) => {
    const raw = pathParam(params.asn, request);
    const asn = parseAsn(raw);
    if (asn === null) throw invalidAsn(raw);
    const body = asnObject(asn, s.index.current.asnDetails(asn), await s.radar.lookup(asn, bucketKeyFor(callerOf(request))), s.index.coverage);
    set.headers['cache-control'] = 'public, max-age=43200';
    return body;
  };
  const params = t.Object({ asn: t.String({ description: 'AS<number>, e.g. AS15169' }) });
  return new Elysia({ name: 'asn' })
    .get('/v1/asn/:asn', handler, { params })
    .get('/asn/:asn', handler, { params });
}
