/**
 * A recorded corpus of requests and the answers the server gave them on the
 * fixture index at a fixed clock: the property that a refactor of the HTTP
 * edge changes no answer. The requests are drawn from a seed (random
 * addresses of both families, addresses of every fixture list, field sets,
 * legacy and text forms, ASNs, the assessment, and the error and method
 * cases of every route); tools/record-answer-corpus.ts writes the recording
 * and test/http/answer-corpus.test.ts replays it.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { V1_FIELDS } from '../../src/lookup/v1.ts';
import { FIXTURE_FEEDS_DIR } from './fixture-index.ts';
import { prng } from './prng.ts';
import { startTestServer } from './test-server.ts';
import type { RunningServer } from '../../src/host/start-server.ts';

/** Where the recording lives. */
export const CORPUS_PATH = resolve(import.meta.dir, '../http/fixtures/answer-corpus.json.gz');

/** The clock the corpus was recorded at (time zones' current offsets, data ages). */
export const CORPUS_NOW = Date.parse('2026-11-20T12:00:00Z');

/** One request of the corpus. */
export interface CorpusRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
}

/** One recorded answer: status, headers (Date left out, names sorted) and body. */
export interface CorpusAnswer {
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

/** A request and the answer recorded for it. */
export interface CorpusEntry {
  request: CorpusRequest;
  answer: CorpusAnswer;
}

/** A route whose answer is compared as parsed JSON (key order may follow the declaration order of routes). */
export const COMPARED_AS_JSON = new Set(['/openapi.json']);

const randomIpv4 = (r: () => number) => [0, 0, 0, 0].map(() => Math.floor(r() * 256)).join('.');
const hex16 = (r: () => number) => Math.floor(r() * 65536).toString(16);
/** A random global unicast IPv6 (2000::/3). */
const randomIpv6 = (r: () => number) => [(0x2000 + Math.floor(r() * 0x2000)).toString(16), ...Array.from({ length: 7 }, () => hex16(r))].join(':');

/** The first address of every `n`-th matching line of a fixture feed. */
function addressesOf(file: string, pattern: RegExp, take: number): string[] {
  const lines = readFileSync(join(FIXTURE_FEEDS_DIR, file), 'utf8').split('\n');
  const found: string[] = [];
  for (const line of lines) {
    const m = pattern.exec(line);
    if (m) found.push(m[1]);
  }
  const step = Math.max(1, Math.floor(found.length / take));
  return found.filter((_, i) => i % step === 0).slice(0, take);
}

/** One address inside every n-th announced prefix of the fixture's RouteViews file (gzip, tab-separated). */
function routedAddresses(take: number): string[] {
  const text = gunzipSync(readFileSync(join(FIXTURE_FEEDS_DIR, 'routing/routeviews-rv2-20240406-1200.pfx2as.gz'))).toString('utf8');
  const v4 = text.split('\n').filter((l) => /^\d+\.\d+\.\d+\.\d+\t/.test(l));
  const step = Math.max(1, Math.floor(v4.length / take));
  return v4.filter((_, i) => i % step === 0).slice(0, take).map((l) => l.split('\t')[0].replace(/\.0$/, '.1'));
}

/** Addresses inside the fixture lists (not the crawler ranges: their answers wait on a DNS proof whose timing is the machine's). */
function listedAddresses(): string[] {
  const first = /^(\d+\.\d+\.\d+\.\d+)/;
  return [
    ...addressesOf('tor/exit-addresses', /^ExitAddress (\S+)/, 6),
    ...addressesOf('vpn/x4bnet-input-mullvadvpn-ips.txt', first, 6),
    ...addressesOf('relay/derived-x4bnet-apple-private-relay-ips.txt', first, 6),
    ...addressesOf('threat/feodotracker-ipblocklist.csv', /^"?[^,#]*"?,"?(\d+\.\d+\.\d+\.\d+)/, 6),
    ...addressesOf('cloud/digitalocean-geofeed.csv', first, 6),
    ...addressesOf('cloud/cloudflare-ips-v4.txt', first, 4),
    ...routedAddresses(24),
    '3.5.140.1', // AWS
    '52.95.110.1',
    '10.0.0.1', // private
    '127.0.0.1',
    '192.0.2.7', // documentation
    '100.64.1.1', // shared
    '224.0.0.5', // multicast
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    '2001:db8::1',
    '::ffff:8.8.8.8', // mapped IPv4
    '::8.8.4.4', // compatible IPv4
    '2a03:2880::1',
  ];
}

/** Random subset of the v1 field names, comma-joined (never empty). */
function randomFields(r: () => number): string {
  const picked = V1_FIELDS.filter(() => r() < 0.35);
  return (picked.length ? picked : [V1_FIELDS[Math.floor(r() * V1_FIELDS.length)]]).join(',');
}

/** The corpus's requests, drawn from `seed`. */
export function corpusRequests(seed = 20261127): CorpusRequest[] {
  const r = prng(seed);
  const get = (path: string, headers?: Record<string, string>): CorpusRequest => ({ method: 'GET', path, ...(headers ? { headers } : {}) });
  const out: CorpusRequest[] = [];
  const listed = listedAddresses();
  for (const ip of listed) out.push(get(`/v1/ip/${ip}`));
  for (let i = 0; i < 150; i++) out.push(get(`/v1/ip/${randomIpv4(r)}`));
  for (let i = 0; i < 40; i++) out.push(get(`/v1/ip/${randomIpv6(r)}`));
  for (let i = 0; i < 60; i++) {
    const ip = r() < 0.5 ? randomIpv4(r) : listed[Math.floor(r() * listed.length)];
    out.push(get(`/v1/ip/${ip}?fields=${randomFields(r)}`));
  }
  for (let i = 0; i < 30; i++) {
    const ip = r() < 0.6 ? randomIpv4(r) : listed[Math.floor(r() * listed.length)];
    const form = Math.floor(r() * 4);
    if (form === 0) out.push(get(`/${ip}`));
    else if (form === 1) out.push(get(`/${ip}?format=text`));
    else if (form === 2) out.push(get(`/${ip}`, { accept: 'text/plain' }));
    else out.push(get(`/${ip}?format=json`));
  }
  for (const asn of ['AS13335', 'AS16509', 'AS15169', 'AS14061', 'AS3356', 'AS38803', 'AS64512', 'AS0', 'AS4294967295', 'as16509', '13335']) {
    out.push(get(`/v1/asn/${asn}`));
    out.push(get(`/asn/${asn}`));
  }
  for (let i = 0; i < 8; i++) out.push(get(`/v1/asn/AS${1 + Math.floor(r() * 70000)}`));
  for (let i = 0; i < 10; i++) out.push(get(`/v1/assessment?ipv4=${randomIpv4(r)}&ipv6=${randomIpv6(r)}`));
  out.push(get(`/v1/assessment?ipv4=${listed[0]}`));
  // Errors and methods, on every kind of route.
  const errors: CorpusRequest[] = [
    get('/v1/ip/not-an-ip'),
    get('/v1/ip/1.2.3.4.5'),
    get('/v1/ip/fe80::1%25eth0'),
    get('/v1/ip/%zz'),
    get('/v1/ip/8.8.8.8?fields='),
    get('/v1/ip/8.8.8.8?fields=ip,bogus'),
    get('/v1/ip/8.8.8.8?fields=network.asn'),
    get('/v1/ip/8.8.8.8?include=rdap_contacts'),
    get('/v1/ip/8.8.8.8?include=nope'),
    get('/v1/ip/8.8.8.8?fields=ip&fields=stack'),
    get('/v1/asn/abc'),
    get('/v1/asn/99999999999'),
    get('/asn/-1'),
    get('/v1/assessment?ipv4=::1'),
    get('/v1/assessment?ipv4=1.1.1.1&ipv4=2.2.2.2'),
    get('/not-an-ip'),
    get('/not-an-ip', { accept: 'text/plain' }),
    get('/not-an-ip?format=text'),
    get('/no/such/route'),
    get('/favicon.ico'),
    get('/robots.txt'),
    get('/v1/crawler/verify'),
    get('/v1/ip/'),
    get('/v1/ip/8.8.8.8/'),
    get('/v1/asn/'),
    get('/auth/keys'),
    get('/health'),
    get('/openapi.json'),
    { method: 'POST', path: '/v1/ip/8.8.8.8' },
    { method: 'DELETE', path: '/v1/asn/13335' },
    { method: 'PUT', path: '/health' },
    { method: 'POST', path: '/1.1.1.1', headers: { accept: 'text/plain' } },
    { method: 'HEAD', path: '/v1/ip/8.8.8.8' },
    { method: 'HEAD', path: '/1.1.1.1' },
    { method: 'OPTIONS', path: '/v1/ip/8.8.8.8', headers: { origin: 'https://example.com', 'access-control-request-method': 'GET' } },
    { method: 'OPTIONS', path: '/no/such/route', headers: { origin: 'https://example.com', 'access-control-request-method': 'GET' } },
    get('/v1/ip/8.8.8.8', { origin: 'https://example.com' }),
    get('/metrics'),
    get('/metrics', { authorization: 'Bearer wrong' }),
    { method: 'POST', path: '/reload' },
  ];
  return [...out, ...errors];
}

/** A server over the fixture index at the corpus clock (limits off: the limiter's answers have their own tests). */
export function startCorpusServer(): Promise<RunningServer> {
  return startTestServer({ IPINTEL_RATE_LIMITS: 'off' }, { now: () => CORPUS_NOW });
}

/** Sends one corpus request and reads its answer. */
export async function answerOf(base: string, req: CorpusRequest): Promise<CorpusAnswer> {
  const res = await fetch(base + req.path, { method: req.method, headers: req.headers, redirect: 'manual' });
  const body = await res.text();
  const headers = [...res.headers].filter(([k]) => k !== 'date').sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { status: res.status, headers, body };
}

/** Reads the recording. */
export function readCorpus(): CorpusEntry[] {
  return JSON.parse(gunzipSync(readFileSync(CORPUS_PATH)).toString('utf8')) as CorpusEntry[];
}

/** The recording's file bytes. */
export function corpusBytes(entries: CorpusEntry[]): Uint8Array {
  return gzipSync(JSON.stringify(entries), { level: 9 });
}
