/**
 * GET /v1/ip/{ip} has one pipeline (src/http/v1-pipeline.ts) behind the one
 * dispatch (server.ts): one body memo, and the fast case (no query, nothing
 * to await) synchronous.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { createCrawlerVerifier, type CrawlerProof, type CrawlerVerifier } from '../../src/crawlers/verifier.ts';
import { createApp } from '../../src/http/app.ts';
import { createFetchHandler } from '../../src/http/server.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { request, startWrapperAndApp, type WrapperAndApp } from '../helpers/wrapper-and-app.ts';

let server: WrapperAndApp['server'];
let handle: WrapperAndApp['handle'];
beforeAll(async () => {
  ({ server, handle } = await startWrapperAndApp());
}, 120_000);
afterAll(() => server.stop());

test('the fast case is synchronous: an explicit lookup without a key or limiter, and nothing to await, awaits nothing', async () => {
  const answer = handle(request('/v1/ip/1.1.1.1'), null);
  expect(answer).toBeInstanceOf(Response);
  const text = await (answer as Response).text();
  expect(JSON.parse(text).ip).toBe('1.1.1.1');
  // A query with nothing to await (no DNS proof pending, no RDAP include) is synchronous too,
  // with the same whole object when it selects nothing.
  const withQuery = handle(request('/v1/ip/1.1.1.1?'), null);
  expect(withQuery).toBeInstanceOf(Response);
  expect(await (withQuery as Response).text()).toBe(text);
  const projected = handle(request('/v1/ip/1.1.1.1?fields=ip,network&fields=explanation'), null);
  expect(projected).toBeInstanceOf(Response);
  expect(Object.keys(JSON.parse(await (projected as Response).text()))).toEqual(['ip', 'network', 'explanation']);
});

test('one body memo: a record answered once is answered again without reading its row', async () => {
  const reader = server.services.index.current as unknown as { record(id: number): unknown };
  const original = reader.record;
  let rowReads = 0;
  reader.record = (id: number) => {
    rowReads++;
    return original.call(reader, id);
  };
  try {
    const first = await (await handle(request('/v1/ip/1.0.0.1'), null)).text();
    expect(rowReads).toBeGreaterThan(0);
    rowReads = 0;
    expect(await (await handle(request('/v1/ip/1.0.0.1'), null)).text()).toBe(first);
    expect(rowReads).toBe(0);
  } finally {
    reader.record = original;
  }
});

test('headers added to one answer (rate-limit headers) never reach the next', async () => {
  const first = (await handle(request('/v1/ip/1.1.1.1'), null)) as Response;
  first.headers.set('x-ratelimit-limit', '10');
  first.headers.set('cache-control', 'no-store');
  const second = (await handle(request('/v1/ip/1.1.1.2'), null)) as Response;
  expect(second.headers.get('x-ratelimit-limit')).toBeNull();
  expect(second.headers.get('cache-control')).toBe('public, max-age=86400');
});

test('a DNS proof is awaited in the same pipeline, and a cached one is used without waiting', async () => {
  const real = createCrawlerVerifier({ dnsServers: ['127.0.0.1:9'] });
  const proof: CrawlerProof = { key: 'googlebot', hostname: 'crawl-8-8-4-4.googlebot.com', verifiedBy: 'reverse_forward_dns' };
  let pending = true;
  const proven: CrawlerVerifier = {
    ...real,
    proofFor: (ip) => (ip === '8.8.4.4' && !pending ? proof : null),
    // The first lookup waits for the check; later ones find the proof cached.
    startProof: (hit) => (hit.ip !== '8.8.4.4' ? null : pending ? Bun.sleep(5).then(() => ((pending = false), proof)) : proof),
  };
  const other = await startTestServer({ IPINTEL_RATE_LIMITS: 'off' }, { crawlers: proven });
  try {
    const otherHandle = createFetchHandler(other.services, createApp(other.services), { tick() {} });
    const waited = otherHandle(request('/v1/ip/8.8.4.4'), null);
    expect(waited).toBeInstanceOf(Promise);
    const body = await (await waited).text();
    expect(JSON.parse(body).classification.is_verified_crawler).toBe(true);
    const cached = otherHandle(request('/v1/ip/8.8.4.4'), null);
    expect(cached).toBeInstanceOf(Response);
    expect(await (cached as Response).text()).toBe(body);
  } finally {
    other.stop();
  }
});

test('with an API key or limits on, the lookup still goes through the pipeline after the caller is resolved', async () => {
  const limited = await startTestServer({});
  try {
    const h = createFetchHandler(limited.services, createApp(limited.services), { tick() {} });
    const r = await h(request('/v1/ip/8.8.8.8'), null);
    expect(r.status).toBe(200);
    // A shared-cacheable answer goes without rate-limit headers (spec 8 rule 2).
    expect(r.headers.get('x-ratelimit-limit')).toBeNull();
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(JSON.parse(await r.text()).ip).toBe('8.8.8.8');
    const bad = await h(request('/v1/ip/nope?fields=ip'), null);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('INVALID_IP');
    // Both took a token from the same bucket.
    expect(Number(bad.headers.get('x-ratelimit-limit')) - Number(bad.headers.get('x-ratelimit-remaining'))).toBe(2);
  } finally {
    limited.stop();
  }
});
