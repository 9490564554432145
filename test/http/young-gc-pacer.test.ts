/** Young-collection pacing: one collection per period of requests, and every request of every route counts. */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { createApp } from '../../src/http/app.ts';
import { createFetchHandler } from '../../src/http/server.ts';
import { REQUESTS_PER_YOUNG_GC, YoungGcPacer } from '../../src/http/young-gc-pacer.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { startTestServer } from '../helpers/test-server.ts';

test('collects once per period of ticks, never in between', () => {
  let collections = 0;
  const pacer = new YoungGcPacer(3, () => collections++);
  const seen: number[] = [];
  for (let i = 0; i < 10; i++) {
    pacer.tick();
    seen.push(collections);
  }
  expect(seen).toEqual([0, 0, 1, 1, 1, 2, 2, 2, 3, 3]);
});

test('a period must be a positive integer', () => {
  for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new YoungGcPacer(bad, () => {})).toThrow(RangeError);
});

test('by default: a real young collection (bun:jsc edenGC) every REQUESTS_PER_YOUNG_GC requests', () => {
  expect(() => new YoungGcPacer(1).tick()).not.toThrow();
  let collections = 0;
  const pacer = new YoungGcPacer(undefined, () => collections++);
  for (let i = 1; i < REQUESTS_PER_YOUNG_GC; i++) pacer.tick();
  expect(collections).toBe(0);
  pacer.tick();
  expect(collections).toBe(1);
});

let srv: RunningServer;
beforeAll(async () => {
  srv = await startTestServer({ IPINTEL_RATE_LIMITS: 'off' });
});
afterAll(() => srv.stop());

test('every request ticks the pacer once: the fast lookup lane, framework routes, errors and refused keys', async () => {
  let ticks = 0;
  const handle = createFetchHandler(srv.services, createApp(srv.services), { tick: () => ticks++ });
  const base = 'http://127.0.0.1';
  const requests = [
    new Request(`${base}/v1/ip/8.8.8.8`), // fast lane
    new Request(`${base}/v1/ip/8.8.8.8?fields=ip`), // through the app
    new Request(`${base}/health`),
    new Request(`${base}/no/such/route`),
    new Request(`${base}/v1/ip/not-an-ip`),
    new Request(`${base}/v1/ip/1.1.1.1`, { headers: { 'x-api-key': 'not-a-key' } }), // refused before any route
  ];
  const statuses: number[] = [];
  for (const r of requests) statuses.push((await handle(r, null)).status);
  expect(statuses).toEqual([200, 200, 200, 404, 400, 401]);
  expect(ticks).toBe(requests.length);
});
