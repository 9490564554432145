/**
 * Keyed requests are counted for /auth/usage whether or not rate limiting
 * is on. Found by the disk-full probe: with IPINTEL_RATE_LIMITS=off the
 * request path skipped usage counting along with the limiter, so private
 * deployments saw zero usage for every key.
 */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';

const servers: RunningServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

describe('usage counting', () => {
  for (const limits of ['on', 'off']) {
    test(
      `IPINTEL_RATE_LIMITS=${limits}: three keyed lookups count three, an anonymous one counts nothing`,
      async () => {
        const server = await startTestServer({ IPINTEL_RATE_LIMITS: limits });
        servers.push(server);
        const accounts = server.services.accounts;
        const { user, created } = await accounts.grantKeyByEmail(`usage-${limits}@example.test`, 'free', 'usage key');
        for (const ip of ['8.8.8.8', '1.1.1.1', '9.9.9.9']) {
          const r = await fetch(`${server.url}/v1/ip/${ip}`, { headers: { 'x-api-key': created.secret } });
          expect(r.status).toBe(200);
          await r.arrayBuffer();
        }
        await (await fetch(`${server.url}/v1/ip/8.8.4.4`)).arrayBuffer();
        await accounts.flush();
        const report = await accounts.usageReport(user.id);
        expect(report.keys.find((k) => k.key_id === created.key.id)?.totals.last_hour).toBe(3);
      },
      120_000,
    );
  }
});
