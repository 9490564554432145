/** Where the drizzle-kit migrations of each dialect live. */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's drizzle/ folder (a compiled binary passes its embedded copy instead). */
export const DEFAULT_MIGRATIONS_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../drizzle');

/** The migrations folder of a dialect under `root`. */
export function migrationsFolder(root: string, dialect: 'sqlite' | 'postgres'): string {
  return join(root, dialect);
}
