/**
 * `cloud-azure`: Microsoft `ServiceTags_Public.json` — `values[]` of service
 * tags, each with `properties.addressPrefixes` (v4 and v6 mixed),
 * `systemService` and `region` (empty for global tags).
 *
 * A prefix appears under several tags (e.g. `AzureCloud`,
 * `AzureCloud.westus`, `ActionGroup`, `ActionGroup.WestUS`); one value per
 * prefix is reported, merged from its tags:
 * - service: a regional tag's `systemService`, else a global tag's name
 *   (e.g. `AzureFrontDoor.Frontend`), never the catch-all `AzureCloud`;
 * - region: the first non-empty tag region.
 * Category: Azure Front Door tags → `content` (CDN edge and origin fetchers);
 * everything else → `datacenter` (platform services run in Azure datacenters).
 * Location: the merged region's place (cloud-regions/azure.ts); a prefix of
 * global tags only has none (a regional prefix covering it still places it).
 */
import type { FeedParser } from '../feed/source.ts';
import type { Category } from '../sink.ts';
import { AZURE_REGIONS } from '../cloud-regions/azure.ts';
import { regionGeo } from '../cloud-regions/place.ts';
import { isObject, textOf } from './provider-formats/json-shape.ts';
import { readEntries, reportEntries } from './provider-formats/report.ts';
import { requireArray, type ProviderEntry, type ProviderFormat } from './provider-formats/types.ts';

/** Operator name reported for every Azure range. */
export const AZURE_PROVIDER = 'Microsoft Azure';

/** The catch-all tag family that names no service. */
const CATCH_ALL = 'AzureCloud';

/** Category of an Azure service label. */
export function azureCategory(service: string | undefined): Category {
  return service?.startsWith('AzureFrontDoor') ? 'content' : 'datacenter';
}

/** A prefix's merged facts while tags are read. */
interface Merged {
  entry: ProviderEntry;
  serviceScore: number;
}

/** Service label a tag gives, with how specific it is (higher wins; 0 = none). */
function tagService(name: string | undefined, systemService: string | undefined, region: string | undefined) {
  if (region && systemService) return { service: systemService, score: 2 };
  if (!region && name && name !== CATCH_ALL && !name.startsWith(`${CATCH_ALL}.`)) return { service: name, score: 1 };
  return { service: undefined, score: 0 };
}

/** Reads the service-tags document into one merged entry per distinct prefix text. */
export const readAzure: ProviderFormat = (doc) => {
  const merged = new Map<string, Merged>();
  const unkeyed: ProviderEntry[] = [];
  requireArray(doc, 'values', 'the Azure service-tags document').forEach((tag, t) => {
    const rec = isObject(tag) ? tag : {};
    const props = isObject(rec.properties) ? rec.properties : {};
    const name = textOf(rec.name);
    const region = textOf(props.region);
    const { service, score } = tagService(name, textOf(props.systemService), region);
    const prefixes = Array.isArray(props.addressPrefixes) ? props.addressPrefixes : [];
    prefixes.forEach((prefix, i) => {
      const where = `values[${t}].properties.addressPrefixes[${i}]`;
      if (typeof prefix !== 'string') return void unkeyed.push({ prefix, where });
      const held = merged.get(prefix);
      if (!held) {
        merged.set(prefix, { entry: { prefix, where, service, region, category: azureCategory(service) }, serviceScore: score });
        return;
      }
      if (score > held.serviceScore) {
        held.entry.service = service;
        held.entry.category = azureCategory(service);
        held.serviceScore = score;
      }
      held.entry.region ??= region;
    });
  });
  const located = [...merged.values()].map(({ entry }) => ({ ...entry, geo: regionGeo(AZURE_REGIONS, entry.region) }));
  return [...located, ...unkeyed];
};

/** Parses a `cloud-azure` source (the `.json.gz` form works too). */
export const parse: FeedParser = async (ctx, sink) => {
  reportEntries(ctx, sink, readEntries(ctx, readAzure), { category: 'datacenter', provider: AZURE_PROVIDER });
};
