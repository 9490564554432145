/**
 * Datadog `ip-ranges.datadoghq.com`: one object per service with
 * `prefixes_ipv4` / `prefixes_ipv6` (synthetics also `…_by_location`).
 * Categories: `webhooks` → `webhook`; `synthetics` → `datacenter` (managed
 * probes run in public clouds); every other section → `content` (intake
 * endpoints: agents, api, logs..., and `synthetics-private-locations`, which
 * lists where customer-hosted probes report to, not the probes).
 * Precedence for a prefix in several sections: webhooks, synthetics, then
 * document order. Synthetics prefixes get their location as `region`.
 */
import type { Category } from '../../sink.ts';
import { isObject } from './json-shape.ts';
import { entriesOf, ShapeError, type ProviderEntry, type ProviderFormat } from './types.ts';

/** Sections with their own category; the rest are intake endpoints. */
const SECTION_CATEGORY: Record<string, Category> = {
  webhooks: 'webhook',
  synthetics: 'datacenter',
};

/** Prefix → location label from a `prefixes_ipv*_by_location` object. */
function locations(section: Record<string, unknown>): Map<string, string> {
  const out = new Map<string, string>();
  for (const key of ['prefixes_ipv4_by_location', 'prefixes_ipv6_by_location']) {
    const byLocation = section[key];
    if (!isObject(byLocation)) continue;
    for (const [location, list] of Object.entries(byLocation)) {
      if (!Array.isArray(list)) continue;
      for (const p of list) if (typeof p === 'string' && !out.has(p)) out.set(p, location);
    }
  }
  return out;
}

/** Reads Datadog's IP ranges. */
export const readDatadog: ProviderFormat = (doc) => {
  if (!isObject(doc)) throw new ShapeError('expected a JSON object of Datadog sections');
  const sections = Object.entries(doc).filter(
    (e): e is [string, Record<string, unknown>] => isObject(e[1]) && Array.isArray(e[1].prefixes_ipv4),
  );
  if (sections.length === 0) throw new ShapeError('expected sections with "prefixes_ipv4" arrays');
  const rank = (name: string) => (name === 'webhooks' ? 0 : name in SECTION_CATEGORY ? 1 : 2);
  sections.sort((a, b) => rank(a[0]) - rank(b[0])); // stable: document order within a rank
  const out: ProviderEntry[] = [];
  for (const [name, section] of sections) {
    const category = SECTION_CATEGORY[name] ?? 'content';
    const where = locations(section);
    for (const key of ['prefixes_ipv4', 'prefixes_ipv6']) {
      const list = section[key];
      if (!Array.isArray(list)) continue;
      for (const entry of entriesOf(list, `${name}.${key}`, { category, service: name })) {
        const region = typeof entry.prefix === 'string' ? where.get(entry.prefix) : undefined;
        out.push(region ? { ...entry, region } : entry);
      }
    }
  }
  return out;
};
