/** Fastly `public-ip-list`: `{"addresses":[..v4..],"ipv6_addresses":[..v6..]}`. */
import { entriesOf, requireArray, type ProviderFormat } from './types.ts';

/** Reads Fastly's public IP list. */
export const readFastly: ProviderFormat = (doc) => [
  ...entriesOf(requireArray(doc, 'addresses'), 'addresses'),
  ...entriesOf(requireArray(doc, 'ipv6_addresses'), 'ipv6_addresses'),
];
