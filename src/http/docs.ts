/**
 * The OpenAPI document (/openapi.json) and docs page (/docs) from
 * @elysiajs/swagger, built over an app holding the same routes. Loaded on
 * first use so that start-up does not pay for the plugin.
 */
import { Elysia } from 'elysia';
import { ERROR_SCHEMA, HAND_DOCUMENTED_PATHS } from './openapi-paths.ts';

export interface DocsApp {
  handle(request: Request): Promise<Response>;
}

/** Loads the swagger plugin and mounts it over the routes `routes()` builds. */
export async function buildDocsApp(routes: () => Elysia<any, any, any, any, any, any, any>): Promise<DocsApp> {
  const { swagger } = await import('@elysiajs/swagger');
  return new Elysia({ handler: { standardHostname: false } })
    .use(
      swagger({
        path: '/docs',
        specPath: '/openapi.json',
        exclude: ['/docs', '/openapi.json'],
        documentation: {
          info: {
            title: 'ipintel',
            version: '1',
            description:
              'IP intelligence: location, network ownership and routing, classification, evidence, score and an advisory decision. Errors are JSON {error, code, details}.',
          },
          tags: [
            { name: 'lookup', description: 'IP lookups (v1)' },
            { name: 'crawlers', description: 'Crawler verification' },
            { name: 'asn', description: 'ASN details' },
            { name: 'legacy', description: 'Legacy routes (JSON or plain text)' },
            { name: 'operations', description: 'Health, status, metrics, reload' },
            { name: 'accounts', description: 'Sign-in, keys, tiers, usage' },
          ],
          components: {
            securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' }, admin: { type: 'http', scheme: 'bearer' } },
            schemas: { Error: ERROR_SCHEMA as never },
          },
          // Routes that read their request by hand are described explicitly.
          paths: HAND_DOCUMENTED_PATHS as never,
        },
      }),
    )
    .use(routes());
}
