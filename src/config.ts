/**
 * Server configuration from the environment (names fixed by
 * ../shared/interface.md). Read once at start-up; pure over `env`.
 */

export interface Config {
  port: number;
  host: string;
  indexPath: string;
  dbPath: string;
  feedsDir: string;
  adminToken: string | null;
  trustProxy: string[];
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
    indexPath: str(env.IPINTEL_INDEX) ?? 'data/ipintel.idx',
    dbPath: str(env.IPINTEL_DB) ?? 'data/ipintel.sqlite',
    feedsDir: str(env.IPINTEL_FEEDS_DIR) ?? 'feeds',
    adminToken: str(env.IPINTEL_ADMIN_TOKEN),
    trustProxy: list(env.IPINTEL_TRUST_PROXY),
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
    rateLimits: (str(env.IPINTEL_RATE_LIMITS) ?? 'on').toLowerCase() !== 'off',
    policyPath: str(env.IPINTEL_POLICY),
  };
}
