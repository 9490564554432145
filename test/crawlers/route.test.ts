import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { ApiError } from '../../src/api-error.ts';
import { errorResponse } from '../../src/http/error-response.ts';
import { crawlerVerifyAnswer } from '../../src/http/routes/crawler-verify.ts';
import { createCrawlerVerifier } from '../../src/crawlers/verifier.ts';
import type { LookupHit } from '../../src/index/record.ts';
import { parseIp } from '../../src/net/ip.ts';
import { startDnsTestServer, type DnsTestServer } from './dns-test-server.ts';
import { makeHit } from './hits.ts';
import type { CrawlerVerifyBody } from '../../src/crawlers/response.ts';

const GOOGLE_ALLOCATION = { cidr: '66.249.64.0/19', range: '66.249.64.0 - 66.249.95.255', registry: 'arin', countryCode: 'US', status: 'allocated', date: null };

const HITS: Record<string, LookupHit> = {
  '66.249.66.1': makeHit('66.249.66.1', { crawler: 'googlebot', asnName: 'GOOGLE', allocation: GOOGLE_ALLOCATION }),
  '66.249.66.9': makeHit('66.249.66.9', { crawler: 'googlebot', asnName: 'GOOGLE', allocation: GOOGLE_ALLOCATION }),
  '20.171.206.10': makeHit('20.171.206.10', { crawler: 'gptbot', asnName: 'MICROSOFT-CORP-MSN-AS-BLOCK' }),
};

let dns: DnsTestServer;
let app: { handle: (r: Request) => Promise<Response> };

/** A thrown ApiError as the spec's error; anything else stays a failure. */
const rendered = (e: unknown): Response => {
  if (e instanceof ApiError) return errorResponse(e);
  throw e;
};
const lookedUp: string[] = [];

beforeAll(async () => {
  dns = await startDnsTestServer();
  dns.set('PTR', '1.66.249.66.in-addr.arpa', { records: [{ data: 'crawl-66-249-66-1.googlebot.com', ttl: 600 }] });
  dns.set('A', 'crawl-66-249-66-1.googlebot.com', { records: [{ data: '66.249.66.1', ttl: 600 }] });
  dns.set('PTR', '9.66.249.66.in-addr.arpa', { silent: true });
  const verifier = createCrawlerVerifier({ dnsServers: [dns.address], timeoutMs: 600, cacheSize: 100 });
  const lookup = (ip: string): LookupHit | null => {
    lookedUp.push(ip);
    if (!parseIp(ip)) return null;
    return HITS[ip] ?? makeHit(ip);
  };
  // Rendered the way the request path does: a thrown ApiError as the spec's error.
  const answer = crawlerVerifyAnswer({ lookup, verifier });
  app = { handle: (request) => answer(request).catch(rendered) };
});

afterAll(() => dns.close());

function post(body: string | ReadableStream<Uint8Array> | null, contentType: string | null = 'application/json', headers: Record<string, string> = {}) {
  const h: Record<string, string> = { ...headers };
  if (contentType) h['content-type'] = contentType;
  return app.handle(new Request('http://localhost/v1/crawler/verify', { method: 'POST', body, headers: h }));
}

async function bodyOf(res: Response): Promise<CrawlerVerifyBody> {
  return (await res.json()) as CrawlerVerifyBody;
}

async function errorOf(res: Response) {
  expect(res.headers.get('content-type')).toContain('application/json');
  return (await res.json()) as { error: string; code: string; details: Record<string, unknown> };
}

describe('POST /v1/crawler/verify', () => {
  test('verifies a genuine Googlebot from the IP alone, in the spec 2.4 shape', async () => {
    const res = await post(JSON.stringify({ ip: '66.249.66.1' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual({
      ip: '66.249.66.1',
      user_agent: null,
      verification_status: 'verified',
      classification: {
        is_known_crawler: true,
        is_verified_crawler: true,
        crawler_provider: 'Google',
        crawler_type: 'search',
        crawler_verified_by: 'reverse_forward_dns',
        crawler_hostname: 'crawl-66-249-66-1.googlebot.com',
      },
      network: { owner: 'GOOGLE', allocation: { cidr: '66.249.64.0/19', registry: 'arin', country: 'US' } },
      explanation: {
        text: 'Verified Googlebot (Google): crawl-66-249-66-1.googlebot.com resolves back to this address.',
        reason_code: 'verified_crawler',
      },
    });
  });

  test('echoes the user agent exactly and answers IPv4-mapped input as IPv4', async () => {
    const ua = '  Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html) ';
    const res = await post(JSON.stringify({ ip: '::ffff:66.249.66.1', user_agent: ua }), 'application/json; charset=utf-8');
    expect(res.status).toBe(200);
    const body = await bodyOf(res);
    expect(body.ip).toBe('66.249.66.1');
    expect(body.user_agent).toBe(ua);
    expect(body.verification_status).toBe('verified');
    expect(lookedUp).toContain('66.249.66.1');
  });

  test('range-and-UA family: verified with the token, known_unverified without', async () => {
    const ok = await bodyOf(await post(JSON.stringify({ ip: '20.171.206.10', user_agent: 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)' })));
    expect(ok.verification_status).toBe('verified');
    expect(ok.classification.crawler_verified_by).toBe('ip_range_and_user_agent');
    expect(ok.classification.crawler_type).toBe('ai_crawler');
    expect(ok.classification.crawler_hostname).toBeNull();
    const bare = await bodyOf(await post(JSON.stringify({ ip: '20.171.206.10', user_agent: 'Mozilla/5.0' })));
    expect(bare.verification_status).toBe('known_unverified');
    expect(bare.explanation.reason_code).toBe('ua_mismatch');
    expect(bare.network).toEqual({ owner: 'MICROSOFT-CORP-MSN-AS-BLOCK', allocation: null });
  });

  test('a DNS timeout is a 200 with dns_timeout, never a 500', async () => {
    const res = await post(JSON.stringify({ ip: '66.249.66.9' }));
    expect(res.status).toBe(200);
    const body = await bodyOf(res);
    expect(body.verification_status).toBe('known_unverified');
    expect(body.explanation.reason_code).toBe('dns_timeout');
    expect(body.classification.is_known_crawler).toBe(true);
    expect(body.classification.is_verified_crawler).toBe(false);
  });

  test('an unknown address gets not_known with null crawler fields', async () => {
    const body = await bodyOf(await post(JSON.stringify({ ip: '2001:db8::5', user_agent: 'curl/8' })));
    expect(body.verification_status).toBe('not_known');
    expect(body.classification).toEqual({
      is_known_crawler: false,
      is_verified_crawler: false,
      crawler_provider: null,
      crawler_type: null,
      crawler_verified_by: null,
      crawler_hostname: null,
    });
    expect(body.network).toEqual({ owner: null, allocation: null });
    expect(body.explanation.reason_code).toBe('not_a_known_crawler');
  });
});

describe('bad requests get a 400 in the spec error shape', () => {
  test.each([
    ['missing ip', JSON.stringify({ user_agent: 'x' }), null, 'missing'],
    ['null ip', JSON.stringify({ ip: null }), null, 'missing'],
    ['non-string ip', JSON.stringify({ ip: 1234 }), 1234, 'not_a_string'],
    ['malformed ip', JSON.stringify({ ip: '999.1.1.1' }), '999.1.1.1', 'malformed'],
    ['zone id', JSON.stringify({ ip: 'fe80::1%eth0' }), 'fe80::1%eth0', 'malformed'],
  ])('%s is INVALID_IP with details.provided', async (_name, body, provided, reason) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const err = await errorOf(res);
    expect(err.code).toBe('INVALID_IP');
    expect(err.details).toEqual({ provided, reason });
    expect(typeof err.error).toBe('string');
  });

  test.each([
    ['a non-JSON body', '{"ip": "66.249.66.1"', 'application/json', 'invalid_json'],
    ['an empty body', '', 'application/json', 'invalid_json'],
    ['a JSON array', '["66.249.66.1"]', 'application/json', 'body_not_object'],
    ['a JSON string', '"66.249.66.1"', 'application/json', 'body_not_object'],
    ['a wrong content type', JSON.stringify({ ip: '66.249.66.1' }), 'text/plain', 'unsupported_media_type'],
    ['a form content type', 'ip=66.249.66.1', 'application/x-www-form-urlencoded', 'unsupported_media_type'],
    ['no content type', JSON.stringify({ ip: '66.249.66.1' }), null, 'unsupported_media_type'],
    ['a non-string user_agent', JSON.stringify({ ip: '66.249.66.1', user_agent: 42 }), 'application/json', 'user_agent_not_string'],
  ])('%s is INVALID_REQUEST', async (_name, body, contentType, reason) => {
    const res = await post(body, contentType);
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.code).toBe('INVALID_REQUEST');
    expect(err.details.reason).toBe(reason);
  });

  test('an oversized body is refused by its Content-Length', async () => {
    const res = await post(JSON.stringify({ ip: '66.249.66.1', user_agent: 'x'.repeat(9000) }));
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.code).toBe('INVALID_REQUEST');
    expect(err.details).toEqual({ reason: 'body_too_large', max_bytes: 8192 });
  });

  test('an oversized streamed body without Content-Length is refused while reading', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(4096));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 4) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await post(stream);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).details.reason).toBe('body_too_large');
  });
});

describe('over a real HTTP listener on 127.0.0.1', () => {
  test('the plugin reads the body itself and answers JSON and errors alike', async () => {
    const verifier = createCrawlerVerifier({ dnsServers: [dns.address], timeoutMs: 600, cacheSize: 100 });
    const answer = crawlerVerifyAnswer({ lookup: (ip) => (parseIp(ip) ? (HITS[ip] ?? makeHit(ip)) : null), verifier });
    const server = { server: Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => answer(request).catch(rendered) }), stop: () => server.server.stop(true) };
    try {
      const url = `http://127.0.0.1:${server.server!.port}/v1/crawler/verify`;
      const ok = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ip: '66.249.66.1', user_agent: 'Googlebot' }) });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('cache-control')).toBe('no-store');
      expect(((await ok.json()) as CrawlerVerifyBody).verification_status).toBe('verified');
      const big = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ip: '66.249.66.1', pad: 'y'.repeat(20_000) }) });
      expect(big.status).toBe(400);
      expect((await errorOf(big)).details.reason).toBe('body_too_large');
    } finally {
      await server.stop();
    }
  });
});
