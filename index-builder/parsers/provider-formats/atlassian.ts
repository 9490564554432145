/**
 * Atlassian `ip-ranges.atlassian.com`: `items[]` with `cidr`, `product[]`,
 * `direction[]`, `region[]`. Categories:
 * - product only `email` → `messaging` (mail senders);
 * - direction only `ingress` → `content` (endpoints users connect to);
 * - otherwise (egress from products: webhooks, integrations) → the manifest category.
 * `service` is the product when there is exactly one; `region` when one non-global region.
 */
import type { Category } from '../../sink.ts';
import { isObject, textOf } from './json-shape.ts';
import { requireArray, type ProviderFormat } from './types.ts';

/** Text members of an array-valued field (empty when absent). */
function labels(v: unknown): string[] {
  return Array.isArray(v) ? v.map(textOf).filter((s): s is string => s !== undefined) : [];
}

/** Reads Atlassian's IP ranges. */
export const readAtlassian: ProviderFormat = (doc) =>
  requireArray(doc, 'items').map((item, i) => {
    const rec = isObject(item) ? item : {};
    const product = labels(rec.product);
    const direction = labels(rec.direction);
    const region = labels(rec.region);
    let category: Category | undefined;
    if (product.length === 1 && product[0] === 'email') category = 'messaging';
    else if (direction.length > 0 && direction.every((d) => d === 'ingress')) category = 'content';
    return {
      prefix: rec.cidr,
      where: `items[${i}].cidr`,
      category,
      service: product.length === 1 ? product[0] : undefined,
      region: region.length === 1 && region[0] !== 'global' ? region[0] : undefined,
    };
  });
