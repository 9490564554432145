/** Routes that parse their own requests are still fully described in /openapi.json. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { RunningServer } from '../../src/server.ts';
import { startTestServer } from '../helpers/test-server.ts';

let server: RunningServer;
let doc: { paths: Record<string, Record<string, { requestBody?: unknown; responses?: Record<string, unknown>; parameters?: Array<{ name: string }> }>>; components: { schemas: Record<string, unknown> } };
beforeAll(async () => {
  server = await startTestServer({ IPINTEL_RATE_LIMITS: 'off' });
  doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as typeof doc;
}, 120_000);
afterAll(() => server.stop());

test('crawler verification: body, result and error responses', () => {
  const op = doc.paths['/v1/crawler/verify'].post;
  expect(op.requestBody).toBeDefined();
  expect(Object.keys(op.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '429']));
  expect(doc.components.schemas.Error).toBeDefined();
});

test('every account route of the spec is listed, even with sign-in disabled', () => {
  for (const [path, method] of [
    ['/auth/idp', 'get'],
    ['/auth/me', 'get'],
    ['/auth/tiers', 'get'],
    ['/auth/logout', 'post'],
    ['/auth/keys', 'get'],
    ['/auth/keys', 'post'],
    ['/auth/keys/{id}', 'delete'],
    ['/auth/usage', 'get'],
    ['/auth/callback', 'get'],
  ] as const) {
    expect({ path, method, documented: doc.paths[path]?.[method] !== undefined }).toEqual({ path, method, documented: true });
  }
  expect(doc.paths['/auth/keys/{id}'].delete.parameters?.map((p) => p.name)).toEqual(['id']);
});
