/**
 * Legacy GET /{ip} is answered before the framework by the request wrapper
 * (server.ts, as GET /v1/ip/{ip} is) through the route's own `legacy`
 * function: both must give the same status, headers and bytes for every kind
 * of request, and the one-line text without a key or limits is synchronous.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { prng } from '../helpers/prng.ts';
import { headersOf, request, startWrapperAndApp, type WrapperAndApp } from '../helpers/wrapper-and-app.ts';

let server: WrapperAndApp['server'];
let app: WrapperAndApp['app'];
let handle: WrapperAndApp['handle'];
beforeAll(async () => {
  ({ server, app, handle } = await startWrapperAndApp());
}, 120_000);
afterAll(() => server.stop());

async function expectSame(path: string, init?: RequestInit): Promise<void> {
  const mine = await handle(request(path, init), null);
  const theirs = await app.handle(request(path, init));
  expect({ path, status: mine.status }).toEqual({ path, status: theirs.status });
  expect({ path, headers: headersOf(mine) }).toEqual({ path, headers: headersOf(theirs) });
  expect(await mine.text()).toBe(await theirs.text());
}

test('the wrapper and the Elysia route answer GET /{ip} the same, as text and JSON, for a spread of addresses', async () => {
  const rnd = prng(11);
  const byte = () => Math.floor(rnd() * 256);
  const ips = ['8.8.8.8', '66.249.66.1', '10.0.0.1', '::1', '2001:db8::1', '::ffff:5.101.96.10'];
  for (let i = 0; i < 150; i++) ips.push(`${byte()}.${byte()}.${byte()}.${byte()}`);
  for (const ip of ips) {
    await expectSame(`/${ip}?format=text`);
    await expectSame(`/${ip}`);
    await expectSame(`/${ip}?format=text&detail=1`);
  }
});

test('the same for negotiation, repeated keys, conditional requests and errors', async () => {
  const cases: Array<[string, RequestInit?]> = [
    ['/8.8.8.8', { headers: { accept: 'text/plain' } }],
    ['/8.8.8.8', { headers: { accept: 'text/plain;q=0.5, application/json' } }],
    ['/8.8.8.8?format=json&format=text'],
    ['/8.8.8.8?format=TEXT'],
    ['/8.8.8.8?format=xml'],
    ['/8.8.8.8?detail=true&format=text'],
    ['/8.8.8.8?other=1'],
    ['/not-an-ip?format=text'],
    ['/not-an-ip'],
    ['/%ZZ'],
    ['/8%2E8.8.8?format=text'],
  ];
  for (const [path, init] of cases) await expectSame(path, init);
  const first = await handle(request('/8.8.8.8?format=text'), null);
  const etag = first.headers.get('etag')!;
  await expectSame('/8.8.8.8?format=text', { headers: { 'if-none-match': etag } });
  expect((await handle(request('/8.8.8.8?format=text', { headers: { 'if-none-match': etag } }), null)).status).toBe(304);
});

test('one-line text without a key or limits is answered synchronously, before the framework', async () => {
  const answer = handle(request('/8.8.8.8?format=text'), null);
  expect(answer).toBeInstanceOf(Response);
  expect((await (answer as Response).text()).startsWith('8.8.8.8\t')).toBe(true);
});

test('the legacy query read by hand gives what URLSearchParams gives (last of a repeated key), for generated queries', async () => {
  const { legacyQuery } = await import('../../src/http/routes/legacy.ts');
  const rnd = prng(3);
  const parts = ['format=text', 'format=json', 'format=', 'format', 'detail=1', 'detail=true', 'detail', 'x=1', 'formats=text', 'xformat=text', 'format=text=1', 'detail==1', 'detail=0', '', 'format=te%78t', 'format=a+b', 'fo%72mat=text'];
  for (let i = 0; i < 2_000; i++) {
    const n = Math.floor(rnd() * 4);
    const query = Array.from({ length: n }, () => parts[Math.floor(rnd() * parts.length)]).join('&');
    const url = `http://127.0.0.1/8.8.8.8?${query}`;
    const p = new URLSearchParams(query);
    expect({ query, got: legacyQuery(url) }).toEqual({ query, got: { format: p.getAll('format').at(-1), detail: p.getAll('detail').at(-1) } });
  }
  expect(legacyQuery('http://127.0.0.1/8.8.8.8')).toEqual({});
});
