/**
 * Legacy GET /{ip} through the one dispatch (server.ts): the one-line text
 * without a key or limits is synchronous, and the legacy query read by hand
 * agrees with URLSearchParams.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { prng } from '../helpers/prng.ts';
import { request, startWrapperAndApp, type WrapperAndApp } from '../helpers/wrapper-and-app.ts';

let server: WrapperAndApp['server'];
let handle: WrapperAndApp['handle'];
beforeAll(async () => {
  ({ server, handle } = await startWrapperAndApp());
}, 120_000);
afterAll(() => server.stop());

test('one-line text without a key or limits is answered synchronously', async () => {
  const answer = handle(request('/8.8.8.8?format=text'), null);
  expect(answer).toBeInstanceOf(Response);
  expect((await (answer as Response).text()).startsWith('8.8.8.8\t')).toBe(true);
});

test('the legacy query read by hand gives what URLSearchParams gives (last of a repeated key), for generated queries', async () => {
  const { legacyQuery } = await import('../../src/http/negotiation.ts');
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
