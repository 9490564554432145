/**
 * Everything the HTTP routes need, created once at start-up (src/main.ts)
 * or by tests with fixtures.
 */
import type { AccountStore } from '../accounts/store.ts';
import type { Config } from '../config.ts';
import type { FeedsStatus } from '../feeds/status-view.ts';
import type { CrawlerVerifier } from '../crawlers/verifier.ts';
import type { IndexHolder } from '../index/holder.ts';
import type { PastIndexes } from '../index/history/past-indexes.ts';
import type { OverridesHolder } from '../lookup/overrides/holder.ts';
import type { PolicyHolder, ServingHolder } from '../lookup/serving.ts';
import type { RdapClient } from '../rdap/index.ts';
import type { RadarClient } from '../lookup/radar.ts';
import type { TrustedProxies } from './client-ip.ts';
import type { HostLink } from './host-link.ts';
import type { HttpMetrics } from './http-metrics.ts';
import type { AdminFailureBudget, RateLimiter } from './ratelimit/index.ts';

/** The services of one server thread. */
export interface AppServices {
  config: Config;
  index: IndexHolder;
  /** The operator's overrides, laid over every lookup (src/lookup/overrides/). */
  overrides: OverridesHolder;
  policy: PolicyHolder;
  /** The serving snapshot (index, coverage, policy, overrides and their memos) each request reads once. */
  serving: ServingHolder;
  crawlers: CrawlerVerifier;
  accounts: AccountStore;
  limiter: RateLimiter | null;
  /** Refused admin tokens per caller (always on, whatever IPINTEL_RATE_LIMITS says). */
  adminFailures: AdminFailureBudget;
  rdap: RdapClient;
  radar: RadarClient;
  metrics: HttpMetrics;
  trusted: TrustedProxies;
  /** Clock (ms); tests inject one. */
  now: () => number;
  /** The feed refresher's state for /v1/data/status (set once it starts; absent: not started). */
  feeds?: FeedsStatus;
  /** The other workers of this host (src/host/workers/); absent when this thread serves alone. */
  host?: HostLink;
  /** The retained history `?at=` answers from (absent: IPINTEL_HISTORY=off). */
  history?: PastIndexes;
  /** Resolves once the recordings of the indexes served so far are written (absent: this thread does not record). */
  historyRecorded?: () => Promise<void>;
}
