/** The server applies the rate-limit module's policy: unknown paths take a token, operator routes do not. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { RunningServer } from '../../src/server.ts';
import { startTestServer } from '../helpers/test-server.ts';

let server: RunningServer;
beforeAll(async () => {
  server = await startTestServer();
}, 120_000);
afterAll(() => server.stop());

const remaining = async (path: string, init?: RequestInit) => {
  const res = await fetch(`${server.url}${path}`, init);
  await res.arrayBuffer();
  return { status: res.status, remaining: res.headers.get('x-ratelimit-remaining') };
};

test('a 404 on an unknown path costs a token (scanners are limited too)', async () => {
  const first = await remaining('/v1/nope');
  const second = await remaining('/v1/nope');
  expect(first.status).toBe(404);
  expect(Number(first.remaining)).toBe(Number(second.remaining) + 1);
});

test('health checks, metrics scrapes and preflights take none', async () => {
  expect((await remaining('/health')).remaining).toBeNull();
  expect((await remaining('/metrics')).remaining).toBeNull();
  expect((await remaining('/v1/ip/1.1.1.1', { method: 'OPTIONS', headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } })).remaining).toBeNull();
});
