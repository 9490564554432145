/** A first end-to-end check that the server starts on the fixture index and answers. */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';

let server: RunningServer;
beforeAll(async () => {
  server = await startTestServer();
}, 120_000); // the first call builds the fixture index
afterAll(() => server.stop());

test('a Tor exit from the real exit list is classified as Tor', async () => {
  const res = await fetch(`${server.url}/v1/ip/185.220.101.1`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { classification: { is_tor: boolean } };
  expect(body.classification.is_tor).toBe(true);
});
