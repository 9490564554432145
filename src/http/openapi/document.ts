/**
 * /openapi.json: generated from the declared answer shapes (src/contract/),
 * the route table's paths (routes/table.ts) and each route's operation
 * (operations.ts). Built once per process on first request; nothing on any
 * answer's path reads it.
 */
import { SESSION_COOKIE } from '../../accounts/web/cookies.ts';
import type { RouteDeclaration } from '../route-table.ts';
import { componentSchemas } from './components.ts';
import { OPERATIONS } from './operations.ts';
import { HEADERS } from './responses.ts';

export interface OpenApiOptions {
  /** Whether sign-in is configured: the account routes then answer instead of 503 AUTH_DISABLED. */
  oauth: boolean;
}

/** Path items of the declared routes, keyed by path; a route's traits (rate limited, text errors) come from its declaration. */
function pathsOf(routes: readonly RouteDeclaration<unknown>[]): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.operations === undefined) continue;
    const traits = { limited: route.exemptFromRateLimit !== true, textErrors: route.textErrors === true };
    paths[route.path] = Object.fromEntries(Object.entries(route.operations).map(([method, name]) => [method, OPERATIONS[name](traits)]));
  }
  return paths;
}

/** The OpenAPI 3.0 document of the declared routes. */
export function buildOpenApiDocument(options: OpenApiOptions, routes: readonly RouteDeclaration<unknown>[]): Record<string, unknown> {
  return {
    openapi: '3.0.3',
    info: {
      title: 'ipintel',
      version: '1',
      description:
        'IP intelligence: location, network ownership and routing, classification, evidence, score and an advisory decision. Errors are JSON {error, code, details}.' +
        (options.oauth ? '' : ' Sign-in is not configured on this server: the account routes answer 503 AUTH_DISABLED.'),
    },
    tags: [
      { name: 'lookup', description: 'IP lookups (v1)' },
      { name: 'crawlers', description: 'Crawler verification' },
      { name: 'asn', description: 'ASN details' },
      { name: 'legacy', description: 'Legacy routes (JSON or plain text)' },
      { name: 'operations', description: 'Health, status, metrics, reload' },
      { name: 'accounts', description: 'Sign-in, keys, tiers, usage' },
    ],
    paths: pathsOf(routes),
    components: {
      schemas: componentSchemas(),
      headers: HEADERS,
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A free or Pro key; without one the anonymous tier applies' },
        admin: { type: 'http', scheme: 'bearer', description: 'IPINTEL_ADMIN_TOKEN' },
        session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'The session cookie set by sign-in' },
      },
    },
  };
}

const cached = new Map<boolean, string>();

/** The document as JSON text, made once per sign-in setting. */
export function openApiJson(options: OpenApiOptions, routes: readonly RouteDeclaration<unknown>[]): string {
  let text = cached.get(options.oauth);
  if (text === undefined) cached.set(options.oauth, (text = JSON.stringify(buildOpenApiDocument(options, routes))));
  return text;
}
