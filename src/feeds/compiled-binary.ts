/**
 * Whether this process runs from the compiled binary: alone in its own
 * module, so the pool and the accounts' opening ask without loading the
 * default data's module and the builder's face behind it.
 */

/** Whether this process runs from a `bun build --compile` binary (its modules live in Bun's virtual /$bunfs). */
export function isCompiledBinary(): boolean {
  return import.meta.url.includes('$bunfs') || import.meta.url.includes('~BUN');
}
