/**
 * `cloud-gcp`: Google Cloud `cloud.json` — `prefixes[]` with `ipv4Prefix` or
 * `ipv6Prefix`, `service` ("Google Cloud") and `scope` (the region, e.g.
 * `africa-south1`). All customer-usable external ranges → `datacenter`.
 * Location: the region's place (cloud-regions/gcp.ts); `global` has none.
 */
import type { FeedParser } from '../feed/source.ts';
import { GCP_REGIONS } from '../cloud-regions/gcp.ts';
import { regionGeo } from '../cloud-regions/place.ts';
import { isObject, textOf } from './provider-formats/json-shape.ts';
import { readEntries, reportEntries } from './provider-formats/report.ts';
import { requireArray, type ProviderFormat } from './provider-formats/types.ts';

/** Operator name reported for every Google Cloud range. */
export const GCP_PROVIDER = 'Google Cloud';

/** Reads the Google Cloud document. */
export const readGcp: ProviderFormat = (doc) =>
  requireArray(doc, 'prefixes', 'the Google Cloud document').map((item, i) => {
    const rec = isObject(item) ? item : {};
    const region = textOf(rec.scope);
    return {
      prefix: rec.ipv4Prefix ?? rec.ipv6Prefix,
      where: `prefixes[${i}]`,
      service: textOf(rec.service),
      region,
      geo: regionGeo(GCP_REGIONS, region),
    };
  });

/** Parses a `cloud-gcp` source. */
export const parse: FeedParser = async (ctx, sink) => {
  reportEntries(ctx, sink, readEntries(ctx, readGcp), { category: 'datacenter', provider: GCP_PROVIDER });
};
