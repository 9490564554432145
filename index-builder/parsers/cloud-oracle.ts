/**
 * `cloud-oracle`: OCI `public_ip_ranges.json` — `regions[]` each with
 * `region` and `cidrs[]` of `{cidr, tags[]}`; tags are `OCI` (compute),
 * `OSN` (Oracle Services Network) and `OBJECT_STORAGE`. `service` is the most
 * specific tag (OBJECT_STORAGE > OSN > OCI; an unknown tag counts as most
 * specific). All ranges → `datacenter`. Location: the region's place
 * (cloud-regions/oracle.ts).
 */
import type { FeedParser } from '../feed/source.ts';
import { ORACLE_REGIONS } from '../cloud-regions/oracle.ts';
import { regionGeo } from '../cloud-regions/place.ts';
import { isObject, textOf } from './provider-formats/json-shape.ts';
import { readEntries, reportEntries } from './provider-formats/report.ts';
import { requireArray, type ProviderEntry, type ProviderFormat } from './provider-formats/types.ts';

/** Operator name reported for every Oracle range. */
export const ORACLE_PROVIDER = 'Oracle Cloud';

/** Known tags from broadest to narrowest. */
const TAG_ORDER = ['OCI', 'OSN', 'OBJECT_STORAGE'];

/** The narrowest of a range's tags, or undefined when it has none. */
export function oracleService(tags: unknown): string | undefined {
  if (!Array.isArray(tags)) return undefined;
  let best: string | undefined;
  let bestRank = -1;
  for (const tag of tags) {
    const t = textOf(tag);
    if (t === undefined) continue;
    const known = TAG_ORDER.indexOf(t);
    const rank = known < 0 ? TAG_ORDER.length : known;
    if (rank > bestRank) [best, bestRank] = [t, rank];
  }
  return best;
}

/** Reads the Oracle document. */
export const readOracle: ProviderFormat = (doc) => {
  const out: ProviderEntry[] = [];
  requireArray(doc, 'regions', 'the Oracle document').forEach((region, r) => {
    const rec = isObject(region) ? region : {};
    const name = textOf(rec.region);
    const geo = regionGeo(ORACLE_REGIONS, name);
    const cidrs = Array.isArray(rec.cidrs) ? rec.cidrs : [];
    cidrs.forEach((c, i) => {
      const cidr = isObject(c) ? c : {};
      out.push({ prefix: cidr.cidr, where: `regions[${r}].cidrs[${i}].cidr`, service: oracleService(cidr.tags), region: name, geo });
    });
  });
  return out;
};

/** Parses a `cloud-oracle` source. */
export const parse: FeedParser = async (ctx, sink) => {
  reportEntries(ctx, sink, readEntries(ctx, readOracle), { category: 'datacenter', provider: ORACLE_PROVIDER });
};
