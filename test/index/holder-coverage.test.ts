/**
 * The holder computes coverage at load and on refresh (a coarse timer in a
 * running server), replacing the object only when a kind turns stale, so the
 * memos keyed by it start over exactly then.
 */
import { beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { COVERAGE_REFRESH_MS, IndexHolder } from '../../src/index/holder.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';

let path: string;
beforeAll(async () => {
  path = await fixtureIndexPath();
}, 300_000);

describe('coverage of the held index', () => {
  test('refresh keeps the object while nothing turned stale, replaces it when the Tor list does', () => {
    // The fixture's Tor list states 2024-03-12 14:00 UTC (its newest LastStatus).
    let now = Date.parse('2024-03-12T15:00:00Z');
    const holder = IndexHolder.open(path, () => now);
    const first = holder.coverage;
    expect(first.kinds.tor.state).toBe('ready');
    now += COVERAGE_REFRESH_MS;
    holder.refreshCoverage();
    expect(holder.coverage).toBe(first);
    now = Date.parse('2024-03-14T00:00:00Z');
    holder.refreshCoverage();
    expect(holder.coverage).not.toBe(first);
    expect(holder.coverage.kinds.tor.state).toBe('stale');
  });

  test('a reload computes it anew', () => {
    let now = Date.parse('2024-03-12T15:00:00Z');
    const holder = IndexHolder.open(path, () => now);
    const first = holder.coverage;
    now = Date.parse('2030-01-01T00:00:00Z');
    holder.reload();
    expect(holder.coverage).not.toBe(first);
    expect(holder.coverage.kinds.tor.state).toBe('stale');
  });
});
