/**
 * The soak's request mix: what an API like this sees in production —
 * lookups from many clients, text routes, crawler verification, keyed
 * calls, a client over its limit (429s), bad input and unknown keys —
 * each with the statuses it may legitimately get and a light check of
 * the answer, so a wrong 200 is caught as well as a 5xx.
 */

export interface SoakKeys {
  free: string;
  pro: string;
}

export interface PlannedRequest {
  kind: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Statuses this request may get; anything else is counted as unexpected. */
  expect: readonly number[];
  /** Checks a response with an expected status; returns what is wrong, or null. */
  check(status: number, contentType: string, body: string, headers: Headers): string | null;
}

type Rand = () => number;

const pick = <T>(rand: Rand, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

/** A uniformly random IPv4 address (every address is a valid lookup, private ones included). */
export function randomIPv4(rand: Rand): string {
  return [0, 0, 0, 0].map(() => Math.floor(rand() * 256)).join('.');
}

/** A random global-unicast IPv6 address (2000::/3), eight full groups. */
export function randomIPv6(rand: Rand): string {
  const groups = Array.from({ length: 8 }, () => Math.floor(rand() * 0x10000));
  groups[0] = 0x2000 | (groups[0] & 0x1fff);
  return groups.map((g) => g.toString(16)).join(':');
}

const randomIp = (rand: Rand) => (rand() < 0.75 ? randomIPv4(rand) : randomIPv6(rand));

/** Client addresses the anonymous traffic comes from (X-Forwarded-For, the server trusts loopback). */
function clientPool(rand: Rand, n: number): string[] {
  return Array.from({ length: n }, () => `10.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}.${1 + Math.floor(rand() * 254)}`);
}

/** The one anonymous client that always goes over its 60/min limit: the source of 429s. */
export const HAMMER_CLIENT = '203.0.113.77';

/** Crawler addresses (in the official ranges of the soak's indexes) and their reverse names; one has none (known, unverified). */
export const CRAWLER_DNS: Array<{ ip: string; host: string | null }> = [
  { ip: '66.249.64.1', host: 'crawl-66-249-64-1.googlebot.com' },
  { ip: '66.249.64.130', host: 'crawl-66-249-64-130.googlebot.com' },
  { ip: '157.55.39.10', host: 'msnbot-157-55-39-10.search.msn.com' },
  { ip: '207.46.13.20', host: 'msnbot-207-46-13-20.search.msn.com' },
  { ip: '40.77.167.5', host: null },
];
const CRAWLER_IPS = CRAWLER_DNS.map((c) => c.ip);
const CRAWLER_UAS = [
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
  'curl/8.0',
];
const ASNS = ['AS13335', 'AS15169', 'AS16509', 'AS8075', 'AS3320', 'AS64512', 'as32934'];

function parseJson(body: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(body);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** Spec 2.6: every JSON error is {error: string, code: string, details: object}. */
function errorShapeProblem(body: string, code?: string): string | null {
  const o = parseJson(body);
  if (!o) return 'error body is not a JSON object';
  if (typeof o.error !== 'string' || typeof o.code !== 'string' || typeof o.details !== 'object' || o.details === null) return 'error body lacks error/code/details';
  if (code && o.code !== code) return `code ${String(o.code)}, expected ${code}`;
  return null;
}

/**
 * Checks shared by every kind: a 429 carries RATE_LIMITED, another error
 * has the spec shape (and `expectedErrorCode`); a success goes to `success`.
 */
function common(status: number, body: string, success: () => string | null, expectedErrorCode?: string): string | null {
  if (status === 429) return errorShapeProblem(body, 'RATE_LIMITED');
  if (status >= 400) return errorShapeProblem(body, expectedErrorCode);
  return success();
}

function jsonWith(body: string, test: (o: Record<string, unknown>) => string | null): string | null {
  const o = parseJson(body);
  return o ? test(o) : 'body is not a JSON object';
}

type Builder = (rand: Rand, ctx: { clients: string[]; keys: SoakKeys }) => PlannedRequest;

const OK_OR_LIMITED = [200, 429] as const;

const KINDS: Array<[weight: number, build: Builder]> = [
  [
    30,
    (rand, { clients }) => {
      const ip = randomIp(rand);
      return {
        kind: 'v1_lookup',
        method: 'GET',
        path: `/v1/ip/${ip}`,
        headers: { 'x-forwarded-for': pick(rand, clients) },
        expect: OK_OR_LIMITED,
        check: (status, _ct, body) =>
          common(status, body, () => jsonWith(body, (o) => (typeof o.ip !== 'string' || (ip.includes('.') && o.ip !== ip) ? `ip ${String(o.ip)} for ${ip}` : !o.score ? 'no score' : null))),
      };
    },
  ],
  [
    5,
    (rand, { clients }) => ({
      kind: 'v1_fields',
      method: 'GET',
      path: `/v1/ip/${randomIPv4(rand)}?fields=ip,score`,
      headers: { 'x-forwarded-for': pick(rand, clients) },
      expect: OK_OR_LIMITED,
      check: (status, _ct, body) => common(status, body, () => jsonWith(body, (o) => (Object.keys(o).sort().join() === 'ip,score' ? null : `fields ${Object.keys(o)}`))),
    }),
  ],
  [
    4,
    (rand, { clients }) => {
      const client = pick(rand, clients);
      return {
        kind: 'v1_current',
        method: 'GET',
        path: '/v1/ip/current',
        headers: { 'x-forwarded-for': client },
        expect: OK_OR_LIMITED,
        check: (status, _ct, body) => common(status, body, () => jsonWith(body, (o) => (o.ip === client ? null : `current ip ${String(o.ip)}, caller ${client}`))),
      };
    },
  ],
  [
    10,
    (rand, { clients }) => {
      const ip = randomIPv4(rand);
      const byHeader = rand() < 0.5;
      return {
        kind: 'text_lookup',
        method: 'GET',
        path: byHeader ? `/${ip}?detail=1` : `/${ip}?format=text&detail=1`,
        headers: { 'x-forwarded-for': pick(rand, clients), ...(byHeader ? { accept: 'text/plain' } : {}) },
        expect: OK_OR_LIMITED,
        check: (status, ct, body) => {
          if (!ct.startsWith('text/plain')) return `content-type ${ct}`;
          if (status === 429) return body.startsWith('error: ') && body.endsWith('\n') && !body.slice(0, -1).includes('\n') ? null : 'text error is not one line "error: ..."';
          const lines = body.trimEnd().split('\n');
          return (lines.length === 4 || (lines.length === 5 && lines[4].startsWith("Domain: "))) && lines[0].split(/\s+/).includes(ip) ? null : `text answer ${JSON.stringify(body.slice(0, 80))}`;
        },
      };
    },
  ],
  [
    4,
    (rand, { clients }) => {
      const client = pick(rand, clients);
      return {
        kind: 'text_current',
        method: 'GET',
        path: '/?format=text',
        headers: { 'x-forwarded-for': client },
        expect: OK_OR_LIMITED,
        check: (status, ct, body) => (!ct.startsWith('text/plain') ? `content-type ${ct}` : status === 429 ? (body.startsWith('error: ') ? null : 'text 429 body') : body === `${client}\n` || body.trim() === client ? null : `text current ${JSON.stringify(body)}`),
      };
    },
  ],
  [
    4,
    (rand, { clients }) => {
      const ip = randomIPv4(rand);
      return {
        kind: 'legacy_json',
        method: 'GET',
        path: `/${ip}`,
        headers: { 'x-forwarded-for': pick(rand, clients), 'if-none-match': '"not-the-etag"' },
        expect: OK_OR_LIMITED,
        check: (status, _ct, body) => common(status, body, () => jsonWith(body, (o) => (o.ip === ip ? null : `legacy ip ${String(o.ip)}`))),
      };
    },
  ],
  [
    5,
    (rand, { clients }) => ({
      kind: 'asn',
      method: 'GET',
      path: `/v1/asn/${pick(rand, ASNS)}`,
      headers: { 'x-forwarded-for': pick(rand, clients) },
      expect: OK_OR_LIMITED,
      check: (status, _ct, body) => common(status, body, () => jsonWith(body, (o) => (typeof o.asn === 'string' && /^AS\d+$/.test(o.asn) ? null : `asn ${String(o.asn)}`))),
    }),
  ],
  [
    3,
    (rand, { clients }) => ({
      kind: 'assessment',
      method: 'GET',
      path: `/v1/assessment?ipv4=${randomIPv4(rand)}&ipv6=${randomIPv6(rand)}`,
      headers: { 'x-forwarded-for': pick(rand, clients) },
      expect: OK_OR_LIMITED,
      check: (status, _ct, body) => common(status, body, () => (parseJson(body) ? null : 'assessment is not a JSON object')),
    }),
  ],
  [
    8,
    (rand, { clients }) => ({
      kind: 'crawler_verify',
      method: 'POST',
      path: '/v1/crawler/verify',
      headers: { 'x-forwarded-for': pick(rand, clients), 'content-type': 'application/json' },
      body: JSON.stringify({ ip: pick(rand, CRAWLER_IPS), user_agent: pick(rand, CRAWLER_UAS) }),
      expect: OK_OR_LIMITED,
      check: (status, _ct, body) =>
        common(status, body, () => jsonWith(body, (o) => (['verified', 'known_unverified', 'not_known'].includes(o.verification_status as string) ? null : `verification_status ${String(o.verification_status)}`))),
    }),
  ],
  [
    8,
    (rand, { keys }) => ({
      kind: 'keyed_free',
      method: 'GET',
      path: `/v1/ip/${randomIp(rand)}`,
      headers: { 'x-api-key': keys.free },
      expect: OK_OR_LIMITED,
      check: (status, _ct, body) => common(status, body, () => jsonWith(body, (o) => (typeof o.ip === 'string' ? null : 'no ip'))),
    }),
  ],
  [
    5,
    (rand, { keys }) => ({
      kind: 'keyed_pro_current',
      method: 'GET',
      path: '/v1/ip/current',
      headers: { 'x-api-key': keys.pro },
      expect: OK_OR_LIMITED,
      // No-store answers carry the tier header: proves the key resolved to pro.
      check: (status, _ct, body, headers) =>
        headers.get('x-ratelimit-tier') !== 'pro'
          ? `tier header ${headers.get('x-ratelimit-tier')}`
          : (common(status, body, () => (parseJson(body)?.ip === '127.0.0.1' ? null : 'pro current ip is not the loopback caller'))),
    }),
  ],
  [
    6,
    (rand) => ({
      kind: 'over_limit_client',
      method: 'GET',
      path: `/v1/ip/${randomIPv4(rand)}`,
      headers: { 'x-forwarded-for': HAMMER_CLIENT },
      expect: OK_OR_LIMITED,
      check: (status, _ct, body) => common(status, body, () => (parseJson(body) ? null : 'not JSON')),
    }),
  ],
  [
    3,
    (rand, { clients }) => {
      const bad = pick(rand, ['1.2.3.999', 'not-an-ip', '1.2.3', '::g', '%E2%98%83']);
      return {
        kind: 'bad_ip',
        method: 'GET',
        path: `/v1/ip/${bad}`,
        headers: { 'x-forwarded-for': pick(rand, clients) },
        expect: [400, 429],
        check: (status, _ct, body) => common(status, body, () => 'a bad IP got a success', 'INVALID_IP'),
      };
    },
  ],
  [
    2,
    (rand, { clients }) => ({
      kind: 'unknown_key',
      method: 'GET',
      path: `/v1/ip/${randomIPv4(rand)}`,
      // An unknown key drains its IP's anonymous bucket (docs/rate-limits.md): 401, or 429 once that is empty.
      headers: { 'x-api-key': `ipi_${'x'.repeat(43)}`, 'x-forwarded-for': pick(rand, clients) },
      expect: [401, 429],
      check: (status, _ct, body) => common(status, body, () => 'an unknown key got a success', 'INVALID_API_KEY'),
    }),
  ],
  [
    3,
    (rand, { clients }) => {
      const health = rand() < 0.5;
      return {
        kind: health ? 'health' : 'data_status',
        method: 'GET',
        path: health ? '/health' : '/v1/data/status',
        headers: { 'x-forwarded-for': pick(rand, clients) },
        // With several workers /health is 503 while a reload has reached some of them (readiness, not a failure).
        expect: health ? [200, 503] : OK_OR_LIMITED,
        check: (status, _ct, body) =>
          status === 503
            ? jsonWith(body, (o) => (o.code === 'SERVICE_UNAVAILABLE' && (o.details as { what?: unknown } | undefined)?.what === 'generation' ? null : `a 503 that is not the generation readiness answer`))
            : common(status, body, () => jsonWith(body, (o) => (o.status === 'ok' ? null : `status ${String(o.status)}`))),
      };
    },
  ],
  [
    1,
    () => ({
      kind: 'not_found',
      method: 'GET',
      path: '/v1/no/such/route',
      headers: {},
      // Unknown paths take a token too (docs/rate-limits.md), so a busy soak may see 429 here.
      expect: [404, 429],
      check: (status, _ct, body) => common(status, body, () => 'unknown route got a success', 'NOT_FOUND'),
    }),
  ],
];

const TOTAL_WEIGHT = KINDS.reduce((n, [w]) => n + w, 0);

/** A request generator over a seeded random source. */
export function requestMix(rand: Rand, keys: SoakKeys, clientCount = 5_000): () => PlannedRequest {
  const ctx = { clients: clientPool(rand, clientCount), keys };
  return () => {
    let r = rand() * TOTAL_WEIGHT;
    for (const [w, build] of KINDS) {
      if ((r -= w) < 0) return build(rand, ctx);
    }
    return KINDS[0][1](rand, ctx);
  };
}

/** Names of every kind in the mix (a run that never produced one of them did not test it). */
export const KIND_NAMES = ['v1_lookup', 'v1_fields', 'v1_current', 'text_lookup', 'text_current', 'legacy_json', 'asn', 'assessment', 'crawler_verify', 'keyed_free', 'keyed_pro_current', 'over_limit_client', 'bad_ip', 'unknown_key', 'health', 'data_status', 'not_found'];
