/**
 * The radar client of a configuration: its cache sized by the memory
 * budget, each caller allowed RADAR_DEFAULTS.callsPerMinute uncached
 * upstream calls. Apart from server.ts so a pool's primary, which serves
 * nothing, makes the host's one client without loading the server.
 */
import type { Config } from '../config.ts';
import { createRadarClient, type RadarClient } from '../lookup/radar.ts';
import { RADAR_DEFAULTS } from '../lookup/radar-defaults.ts';
import type { MemoryBudget } from '../memory-budget.ts';
import { createCallerBudget } from './ratelimit/caller-budget.ts';

/** The radar client of a configuration, its cache sized by the memory budget, each caller allowed RADAR_DEFAULTS.callsPerMinute uncached upstream calls. */
export function createRadarFromConfig(config: Pick<Config, 'radarUrl' | 'radarToken'>, memory: Pick<MemoryBudget, 'radarEntries' | 'radarBytes'>): RadarClient {
  const calls = createCallerBudget(RADAR_DEFAULTS.callsPerMinute);
  return createRadarClient({
    url: config.radarUrl,
    token: config.radarToken,
    maxEntries: memory.radarEntries,
    maxBytes: memory.radarBytes,
    budget: (caller) => calls.spend(caller).allowed,
  });
}
