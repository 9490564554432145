/** CDN77 prefix list: `{"updated_at":..,"prefixes":[{"prefix":"89.222.125.0/26"},...]}`. */
import { isObject } from './json-shape.ts';
import { requireArray, type ProviderFormat } from './types.ts';

/** Reads CDN77's prefixes. */
export const readCdn77: ProviderFormat = (doc) =>
  requireArray(doc, 'prefixes').map((item, i) => ({
    prefix: isObject(item) ? item.prefix : undefined,
    where: `prefixes[${i}].prefix`,
  }));
