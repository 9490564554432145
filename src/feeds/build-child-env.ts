/**
 * The environment a build child (the first build, the feed refresher's
 * child) starts with: the server's own, except the allocator's purge delay.
 * The server runs with MIMALLOC_PURGE_DELAY=-1 (never hand freed memory back
 * to the OS: a busy server otherwise faults it back in per request), but a
 * build frees large phases of its own and must hand them back to stay under
 * its peak budget (BENCHMARKS.md, "The second worker's extra CPU per request").
 */

/** The purge delay a build child gets when the server's never purges (the setting builds were measured with). */
export const BUILD_PURGE_DELAY = '1000';

/** `env` for a build child: a negative (never) MIMALLOC_PURGE_DELAY becomes BUILD_PURGE_DELAY; anything else is kept. */
export function buildChildEnv(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const delay = env.MIMALLOC_PURGE_DELAY;
  if (delay === undefined || !/^\s*-/.test(delay)) return env;
  return { ...env, MIMALLOC_PURGE_DELAY: BUILD_PURGE_DELAY };
}
