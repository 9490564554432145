/** English country names from ISO 3166-1 alpha-2 codes (Intl, no data file). */
const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
const cache = new Map<string, string | null>();

/** The English name of a country code, or null when unknown. */
export function countryName(code: string | null): string | null {
  if (!code || !/^[A-Z]{2}$/.test(code) || code === 'ZZ') return null; // ZZ: "unknown" in RIR files
  let name = cache.get(code);
  if (name === undefined) {
    try {
      name = names.of(code) ?? null;
    } catch {
      name = null;
    }
    cache.set(code, name);
  }
  return name;
}
