/** Imperva `ips` API answer: `{"ipRanges":[..v4..],"ipv6Ranges":[..v6..],"res":0,...}`. */
import { entriesOf, requireArray, ShapeError, type ProviderFormat } from './types.ts';

/** Reads Imperva's IP ranges; a non-zero `res` is an API error document, not data. */
export const readImperva: ProviderFormat = (doc) => {
  const res = (doc as { res?: unknown } | null)?.res;
  if (res !== undefined && res !== 0) throw new ShapeError(`API error document (res=${JSON.stringify(res)})`);
  return [
    ...entriesOf(requireArray(doc, 'ipRanges'), 'ipRanges'),
    ...entriesOf(requireArray(doc, 'ipv6Ranges'), 'ipv6Ranges'),
  ];
};
