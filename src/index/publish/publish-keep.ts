/** IPINTEL_PUBLISH_KEEP, read on its own: the configuration needs it without loading the publisher. */

/** Versions kept when IPINTEL_PUBLISH_KEEP is unset. */
const DEFAULT_PUBLISH_KEEP = 3;

/** IPINTEL_PUBLISH_KEEP: a whole number 1..1000; unset or blank: DEFAULT_PUBLISH_KEEP. Throws otherwise. */
export function parsePublishKeep(text: string | undefined): number {
  const t = text?.trim() ?? '';
  if (t === '') return DEFAULT_PUBLISH_KEEP;
  const keep = Number(t);
  if (!/^[0-9]+$/.test(t) || keep < 1 || keep > 1000) throw new Error(`IPINTEL_PUBLISH_KEEP must be a whole number 1..1000 (got "${text}")`);
  return keep;
}
