/**
 * Small type guards for reading publishers' JSON documents without trusting
 * their shape.
 */

/** A JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value as an array, or null when it is not one. */
export function arrayOf(v: unknown): unknown[] | null {
  return Array.isArray(v) ? v : null;
}

/** A trimmed non-empty string, or undefined. */
export function textOf(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}
