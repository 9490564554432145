/**
 * Where the index and the feeds live when the environment names none: on
 * their own, so that reading the configuration loads no index code.
 */

/** Where the index file lives when IPINTEL_INDEX names none (src/config.ts, and the builder run bare). */
export const DEFAULT_INDEX_PATH = 'data/ipintel.idx';
/** The feeds folder when IPINTEL_FEEDS_DIR names none. */
export const DEFAULT_FEEDS_DIR = 'feeds';
