/**
 * The admin-token budget by wider prefixes and host-wide (issue 36 #11),
 * against a real server on 127.0.0.1 trusting X-Forwarded-For from
 * loopback: 60 /64s of one IPv6 /48 get no more wrong guesses than one
 * address; a /32 likewise; callers spread over many networks share the
 * host's budget; the real token is never refused.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { ADMIN_FAILURES_HOST_PER_MINUTE, ADMIN_FAILURES_PER_MINUTE, adminScopes } from '../../src/http/ratelimit/index.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';

const ADMIN = 'admin-prefixes-token';
let server: RunningServer;

beforeAll(async () => {
  server = await startTestServer({ IPINTEL_ADMIN_TOKEN: ADMIN, IPINTEL_TRUST_PROXY: 'loopback', IPINTEL_RATE_LIMITS: 'off' });
});
afterAll(() => server?.stop());

/** A wrong admin token from `from`; the status. */
async function guess(from: string, i: number): Promise<number> {
  const r = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer guess-${i}`, 'x-forwarded-for': from } });
  await r.arrayBuffer();
  return r.status;
}

describe('the budgets a wrong admin token spends', () => {
  test('IPv4: the address and the host; IPv6: the /64, /48, /32 and the host; IPv4 inside IPv6 is IPv4', () => {
    expect(adminScopes('198.51.100.7').map((s) => s.key)).toEqual(['ip:198.51.100.7', 'admin:host']);
    expect(adminScopes('2001:db8:aa:bb:1::9').map((s) => s.key)).toEqual(['ip6:2001:db8:aa:bb::/64', 'ip6:2001:db8:aa::/48', 'ip6:2001:db8::/32', 'admin:host']);
    expect(adminScopes('::ffff:198.51.100.7').map((s) => s.key)).toEqual(['ip:198.51.100.7', 'admin:host']);
    expect(adminScopes(null).map((s) => s.key)).toEqual(['ip:unknown', 'admin:host']);
  });

  test('60 /64s of one /48: 10 wrong tokens in all, then 429 for every /64 of it; another /32 still answered', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push(await guess(`2001:db8:1:${i.toString(16)}::1`, i));
    expect(statuses.filter((s) => s === 403)).toHaveLength(ADMIN_FAILURES_PER_MINUTE);
    expect(statuses.slice(ADMIN_FAILURES_PER_MINUTE).every((s) => s === 429)).toBe(true);
    // Another /48 of the same /32: the /32's budget is spent too.
    expect(await guess('2001:db8:2::1', 99)).toBe(429);
    // Elsewhere: answered (403), and the real token from the spent /48 is never refused.
    expect(await guess('2001:db9::1', 100)).toBe(403);
    const real = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}`, 'x-forwarded-for': '2001:db8:1:5::1' } });
    await real.arrayBuffer();
    expect(real.status).toBe(200);
  });

  test('callers spread over many networks share the host budget', async () => {
    const statuses: number[] = [];
    // One guess per /32 (and per IPv4 address): no narrow budget runs out, the host's does.
    for (let i = 0; i < ADMIN_FAILURES_HOST_PER_MINUTE + 20; i++) statuses.push(await guess(i % 2 ? `2a0${i % 10}:${(i + 16).toString(16)}::1` : `203.0.${i}.1`, i));
    const answered = statuses.filter((s) => s === 403).length;
    // The earlier test spent 11 from the host's budget already.
    expect(answered).toBeLessThanOrEqual(ADMIN_FAILURES_HOST_PER_MINUTE);
    expect(statuses.slice(-10).every((s) => s === 429)).toBe(true);
  });
});
