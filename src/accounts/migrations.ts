/** Where the drizzle-kit migrations of each dialect live. */
import { join, resolve } from 'node:path';

/** The repository's drizzle/ folder (a compiled binary passes its embedded copy instead). import.meta.dir, not node:url: a module each worker thread would load at start for this alone. */
export const DEFAULT_MIGRATIONS_ROOT = resolve(import.meta.dir, '../../drizzle');

/** The migrations folder of a dialect under `root`. */
export function migrationsFolder(root: string, dialect: 'sqlite' | 'postgres'): string {
  return join(root, dialect);
}
