/**
 * A short soak (8 s; `bun run tools/soak/soak.ts` runs the 60 s one): the
 * real server as a child process, mixed traffic at bounded concurrency, an
 * atomic index swap + reload every 2 s. Zero 5xx, zero dropped, zero
 * unexpected statuses or wrong answers, every reload taken, every kind of
 * request exercised. RSS is sampled but too short a run to judge.
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { runSoak } from '../../tools/soak/run-soak.ts';
import { formatSoakSummary } from '../../tools/soak/summary.ts';
import { KIND_NAMES } from '../../tools/soak/traffic.ts';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';

test(
  '8 s of mixed traffic with a reload every 2 s: zero 5xx, zero dropped',
  async () => {
    const r = await runSoak({ durationMs: 8_000, reloadEveryMs: 2_000, concurrency: 8, rssWarmupMs: 2_000, feedsDir: FIXTURE_FEEDS_DIR });
    if (r.failures.length > 0) console.error(formatSoakSummary(r));
    expect(r.serverErrors).toBe(0);
    expect(r.dropped).toBe(0);
    expect(r.samples).toEqual({ dropped: [], unexpected: [], wrong: [], serverErrors: [] });
    expect(r.unexpected).toBe(0);
    expect(r.wrongAnswers).toBe(0);
    expect(r.reloads.failed).toBe(0);
    expect(r.reloads.ok).toBeGreaterThanOrEqual(2);
    expect(r.childExitCode).toBe(0);
    // Not vacuous: real traffic of every kind, successes, rate limiting and refusals.
    expect(r.requests).toBeGreaterThan(300);
    expect(Object.keys(r.byKind).sort()).toEqual([...KIND_NAMES].sort());
    for (const status of ['200', '400', '401', '404', '429']) expect(r.byStatus[status]).toBeGreaterThan(0);
    // Crawler verification took its DNS path (loopback DNS server): some verified, the PTR-less one not.
    expect(r.verifyStatuses.verified).toBeGreaterThan(0);
    expect(r.verifyStatuses.known_unverified).toBeGreaterThan(0);
    expect(r.rssSamples.length).toBeGreaterThanOrEqual(5);
    expect(r.failures).toEqual([]);
  },
  120_000,
);
