/**
 * Zscaler cloud enforcement node ranges (`/cenr/json`):
 * `{"<cloud>":{"continent : EMEA":{"city : Abu Dhabi II":[{"range":..},..]}}}`
 * — keys carry a `"kind : "` prefix. The node name (city key without the
 * prefix) becomes `region`, the cloud name (e.g. `zscaler.net`) `service`.
 * A top-level `svpnIPs` address list (added by some mirrors) is read too, as
 * service `svpn`.
 */
import { isObject } from './json-shape.ts';
import { entriesOf, ShapeError, type ProviderEntry, type ProviderFormat } from './types.ts';

/** `"city : Abu Dhabi II"` → `Abu Dhabi II`. */
function label(key: string): string {
  const at = key.indexOf(' : ');
  return (at >= 0 ? key.slice(at + 3) : key).trim();
}

/** Reads Zscaler's node ranges. */
export const readZscaler: ProviderFormat = (doc) => {
  if (!isObject(doc)) throw new ShapeError('expected a JSON object keyed by Zscaler cloud name');
  const out: ProviderEntry[] = [];
  let clouds = 0;
  for (const [cloud, continents] of Object.entries(doc)) {
    if (!isObject(continents)) continue;
    clouds++;
    for (const [continent, cities] of Object.entries(continents)) {
      if (!isObject(cities)) continue;
      for (const [cityKey, nodes] of Object.entries(cities)) {
        if (!Array.isArray(nodes)) continue;
        const region = label(cityKey);
        nodes.forEach((node, i) => {
          out.push({
            prefix: isObject(node) ? node.range : undefined,
            where: `${cloud}.${continent}.${cityKey}[${i}].range`,
            service: cloud,
            region,
          });
        });
      }
    }
  }
  if (clouds === 0) throw new ShapeError('expected a "<cloud>": {"continent : ...": {...}} object');
  if (Array.isArray(doc.svpnIPs)) out.push(...entriesOf(doc.svpnIPs, 'svpnIPs', { service: 'svpn' }));
  return out;
};
