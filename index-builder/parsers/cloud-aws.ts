/**
 * `cloud-aws`: AWS `ip-ranges.json` — `prefixes[]` (`ip_prefix`) and
 * `ipv6_prefixes[]` (`ipv6_prefix`), each with `region` and `service`.
 *
 * AWS lists a prefix once per service: the generic `AMAZON` plus specific
 * ones. One value per distinct prefix is reported, preferring a specific
 * service over `EC2` over `AMAZON` (EC2 is general compute and co-listed with
 * narrower services); among equals the first in the file wins.
 * Category: `CLOUDFRONT` and `CLOUDFRONT_ORIGIN_FACING` → `content` (CDN
 * edges and their origin fetchers); everything else → `datacenter`.
 * Location: the region's place (cloud-regions/aws.ts); `GLOBAL` has none.
 */
import type { FeedParser } from '../feed/source.ts';
import type { Category } from '../sink.ts';
import { AWS_REGIONS } from '../cloud-regions/aws.ts';
import { regionGeo } from '../cloud-regions/place.ts';
import { isObject, textOf } from './provider-formats/json-shape.ts';
import { readEntries, reportEntries } from './provider-formats/report.ts';
import { requireArray, type ProviderEntry, type ProviderFormat } from './provider-formats/types.ts';

/** Operator name reported for every AWS range. */
export const AWS_PROVIDER = 'Amazon Web Services';

/** AWS services whose ranges are content delivery, not compute. */
const CONTENT_SERVICES = new Set(['CLOUDFRONT', 'CLOUDFRONT_ORIGIN_FACING']);

/** Lower is weaker: AMAZON (everything) < EC2 (general compute) < any named service. */
function specificity(service: string | undefined): number {
  if (service === undefined || service === 'AMAZON') return 0;
  return service === 'EC2' ? 1 : 2;
}

/** Category of an AWS service. */
export function awsCategory(service: string | undefined): Category {
  return service !== undefined && CONTENT_SERVICES.has(service) ? 'content' : 'datacenter';
}

/** Reads the AWS document into one entry per distinct prefix text (most specific service). */
export const readAws: ProviderFormat = (doc) => {
  const best = new Map<string, ProviderEntry>();
  const lists: Array<[list: string, key: string]> = [
    ['prefixes', 'ip_prefix'],
    ['ipv6_prefixes', 'ipv6_prefix'],
  ];
  const unkeyed: ProviderEntry[] = [];
  for (const [list, key] of lists) {
    requireArray(doc, list, 'the AWS document').forEach((item, i) => {
      const rec = isObject(item) ? item : {};
      const service = textOf(rec.service);
      const region = textOf(rec.region);
      const entry: ProviderEntry = {
        prefix: rec[key],
        where: `${list}[${i}].${key}`,
        category: awsCategory(service),
        service,
        region,
        geo: regionGeo(AWS_REGIONS, region),
      };
      if (typeof entry.prefix !== 'string') return void unkeyed.push(entry); // reported as skipped
      const held = best.get(entry.prefix);
      if (!held || specificity(service) > specificity(held.service)) best.set(entry.prefix, entry);
    });
  }
  return [...best.values(), ...unkeyed];
};

/** Parses a `cloud-aws` source. */
export const parse: FeedParser = async (ctx, sink) => {
  reportEntries(ctx, sink, readEntries(ctx, readAws), { category: 'datacenter', provider: AWS_PROVIDER });
};
