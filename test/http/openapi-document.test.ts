/**
 * /openapi.json is a valid OpenAPI document (a real validator, with sign-in
 * off and on), documents exactly the app's routes, and types the fields a
 * client generator must get right precisely.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import SwaggerParser from '@apidevtools/swagger-parser';
import { loadConfig } from '../../src/config.ts';
import { createApp } from '../../src/http/app.ts';
import { V1_FIELDS } from '../../src/lookup/v1.ts';
import type { RunningServer } from '../../src/host/start-server.ts';
import { createServices } from '../../src/host/start-server.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { UNREACHABLE_OIDC_ENV } from '../helpers/oauth-env.ts';

const OAUTH = UNREACHABLE_OIDC_ENV;

type Json = Record<string, any>;
const servers: RunningServer[] = [];
const docs: Record<'off' | 'on', Json> = { off: {}, on: {} };

beforeAll(async () => {
  for (const [which, env] of [['off', {}], ['on', OAUTH]] as const) {
    const server = await startTestServer({ IPINTEL_RATE_LIMITS: 'off', ...env });
    servers.push(server);
    const res = await fetch(`${server.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    docs[which] = (await res.json()) as Json;
  }
}, 120_000);
afterAll(() => Promise.all(servers.map((s) => s.stop())));

describe.each(['off', 'on'] as const)('sign-in %s', (which) => {
  test('the document validates (swagger-parser: OpenAPI 3.0 schema and semantics)', async () => {
    // validate() dereferences in place: give it a copy.
    await SwaggerParser.validate(structuredClone(docs[which]) as never);
  });

  test('every operation that takes an API key says so, and every operation declares its errors', () => {
    for (const [path, item] of Object.entries(docs[which].paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        const where = `${method.toUpperCase()} ${path}`;
        const statuses = Object.keys(op.responses);
        expect({ where, has: ['400', '405', '500'].every((s) => statuses.includes(s)) }).toEqual({ where, has: true });
        const limited = !['/health', '/metrics', '/reload', '/openapi.json', '/docs'].includes(path);
        if (limited) expect({ where, has: ['401', '429'].every((s) => statuses.includes(s)) }).toEqual({ where, has: true });
        if (limited && !path.startsWith('/auth') && path !== '/dashboard') expect({ where, security: op.security }).toEqual({ where, security: [{}, { apiKey: [] }] });
        if (limited) expect({ where, retryAfter: Object.keys(op.responses['429'].headers) }).toEqual({ where, retryAfter: expect.arrayContaining(['Retry-After', 'X-RateLimit-Limit']) });
        expect({ where, allow: Object.keys(op.responses['405'].headers) }).toEqual({ where, allow: expect.arrayContaining(['Allow']) });
      }
    }
  });
});

test('the document lists exactly the routes the app answers (docs and preflights aside)', async () => {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', IPINTEL_INDEX: await fixtureIndexPath(), IPINTEL_DB: ':memory:', ...OAUTH });
  const app = createApp(await createServices(config));
  const undocumented = new Set(['/docs/*']);
  const routes = app.table.entries
    .filter((e) => !undocumented.has(e.label))
    .flatMap((e) => Object.keys(e.handlers).map((m) => `${m} ${e.label}`))
    .sort();
  const documented = Object.entries(docs.on.paths as Json)
    .flatMap(([path, item]) => Object.keys(item as Json).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
  expect(documented).toEqual(routes);
});

test('a generated client types location.country_code and classification.is_vpn precisely', () => {
  const schemas = docs.off.components.schemas;
  const v1 = schemas.V1Object;
  expect(v1.additionalProperties).toBe(false);
  // Always present in the whole object: every top-level field the lookup builds (rdap only with an include).
  expect(v1.required).toEqual([...V1_FIELDS]);
  expect(v1.properties.location).toEqual({ nullable: true, allOf: [{ $ref: '#/components/schemas/Location' }], description: expect.any(String) });
  expect(schemas.Location.required).toContain('country_code');
  expect(schemas.Location.properties.country_code).toMatchObject({ type: 'string', nullable: true, pattern: '^[A-Z]{2}$' });
  expect(v1.properties.classification).toEqual({ $ref: '#/components/schemas/Classification' });
  expect(schemas.Classification.required).toContain('is_vpn');
  expect(schemas.Classification.properties.is_vpn).toEqual({ type: 'boolean' });
  expect(schemas.Classification.properties.threat_level.enum).toEqual(['Unknown', 'Low', 'Medium', 'High']);
  expect(schemas.Evidence.properties.unavailable.items.enum).toContain('network_type');
  expect(schemas.Error.properties.code.enum).toEqual(expect.arrayContaining(['BAD_REQUEST', 'METHOD_NOT_ALLOWED', 'RATE_LIMITED']));
});

test('negotiated text and response headers are declared where the server sends them', () => {
  const paths = docs.off.paths;
  const legacy = paths['/{ip}'].get;
  expect(Object.keys(legacy.responses['200'].content).sort()).toEqual(['application/json', 'text/plain']);
  expect(Object.keys(legacy.responses['200'].headers)).toEqual(expect.arrayContaining(['ETag', 'Cache-Control', 'X-RateLimit-Remaining']));
  expect(Object.keys(legacy.responses['400'].content).sort()).toEqual(['application/json', 'text/plain']);
  expect(legacy.responses['304']).toBeDefined();
  expect(Object.keys(paths['/metrics'].get.responses['200'].content)).toEqual(['text/plain']);
  expect(paths['/metrics'].get.security).toEqual([{ admin: [] }]);
  expect(Object.keys(paths['/auth/me'].get.responses)).toEqual(expect.arrayContaining(['200', '401', '503']));
  expect(docs.off.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'X-API-Key', description: expect.any(String) });
});
