/** Google `goog.json` (all Google-owned ranges): `{"prefixes":[{"ipv4Prefix":..}|{"ipv6Prefix":..}]}`. */
import { isObject } from './json-shape.ts';
import { requireArray, type ProviderFormat } from './types.ts';

/** Reads a Google-style prefix list. */
export const readGoogleGoog: ProviderFormat = (doc) =>
  requireArray(doc, 'prefixes').map((item, i) => ({
    prefix: isObject(item) ? (item.ipv4Prefix ?? item.ipv6Prefix) : undefined,
    where: `prefixes[${i}]`,
  }));
