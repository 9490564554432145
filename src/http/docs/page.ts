/**
 * GET /docs (and /docs/): the API reference over /openapi.json, rendered by
 * a pinned swagger-ui-dist served from this server. Same-origin files only,
 * each with Subresource Integrity, under a CSP that allows nothing else:
 * the page works offline and no third party can change what it runs.
 */
import bundlePath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' };
import cssPath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' };

/** Where the page's files are served, below /docs so they share its rate-limit exemption. */
export const DOCS_ASSET_PATHS = {
  bundle: '/docs/swagger-ui-bundle.js',
  css: '/docs/swagger-ui.css',
  init: '/docs/reference-init.js',
} as const;

// Swagger UI sets style attributes from script, hence 'unsafe-inline' for styles only.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// Starts the reference over this server's own document. A file, not inline: the CSP allows scripts from 'self' only.
const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true, validatorUrl: null });
});
`;

interface Asset {
  body: Uint8Array;
  type: string;
  integrity: string;
}

export interface DocsSite {
  /** The answer to a GET under /docs, or null when the path is no docs file. */
  answer(path: string): Response | null;
}

async function asset(source: string | Uint8Array, type: string): Promise<Asset> {
  const body = typeof source === 'string' ? new Uint8Array(await Bun.file(source).arrayBuffer()) : source;
  const integrity = 'sha384-' + new Bun.CryptoHasher('sha384').update(body).digest('base64');
  return { body, type, integrity };
}

function page(css: Asset, bundle: Asset, init: Asset): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ipintel API reference</title>
<link rel="stylesheet" href="${DOCS_ASSET_PATHS.css}" integrity="${css.integrity}">
</head>
<body>
<div id="reference"></div>
<script src="${DOCS_ASSET_PATHS.bundle}" integrity="${bundle.integrity}"></script>
<script src="${DOCS_ASSET_PATHS.init}" integrity="${init.integrity}"></script>
</body>
</html>
`;
}

const SECURITY_HEADERS = { 'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };

/** Loads the reference files (once, on the first docs request) and answers the docs paths. */
export async function loadDocsSite(): Promise<DocsSite> {
  const [css, bundle, init] = await Promise.all([asset(cssPath, 'text/css; charset=utf-8'), asset(bundlePath, 'text/javascript; charset=utf-8'), asset(new TextEncoder().encode(INIT_SCRIPT), 'text/javascript; charset=utf-8')]);
  const html = page(css, bundle, init);
  const files = new Map<string, Asset>([
    [DOCS_ASSET_PATHS.css, css],
    [DOCS_ASSET_PATHS.bundle, bundle],
    [DOCS_ASSET_PATHS.init, init],
  ]);
  return {
    answer(path) {
      if (path === '/docs' || path === '/docs/') {
        return new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...SECURITY_HEADERS } });
      }
      const file = files.get(path);
      if (!file) return null;
      // Revalidated: the page pins each file by hash, so a cached file from before an upgrade would fail its integrity check.
      return new Response(file.body, { headers: { 'content-type': file.type, 'cache-control': 'no-cache', ...SECURITY_HEADERS } });
    },
  };
}
