/** Shared HTML pieces of the dashboard and the sign-in error page: escaping, layout, styles. */

/** Escapes text for HTML element content and quoted attributes. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** JSON safe to embed in a <script type="application/json"> block. */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

/** A random nonce for the page's inline script and style (CSP). */
export function newNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64');
}

const STYLES = `
:root{--bg:#0f172a;--card:#111c33;--line:#23304d;--text:#e2e8f0;--muted:#94a3b8;--accent:#38bdf8;--accent2:#0ea5e9;--danger:#f87171;--ok:#4ade80}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--text)}
header{display:flex;align-items:center;justify-content:space-between;padding:18px 28px;border-bottom:1px solid var(--line)}
header .brand{font-weight:700;letter-spacing:.02em}header .brand span{color:var(--accent)}
main{max-width:960px;margin:0 auto;padding:28px}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:20px 22px;margin-bottom:20px}
.card h2{margin:0 0 12px;font-size:17px}
.muted{color:var(--muted)}.row{display:flex;gap:12px;align-items:center;flex-wrap:wrap}
.badge{display:inline-block;padding:2px 10px;border-radius:999px;font-size:12px;font-weight:600;background:#1e3a5f;color:var(--accent)}
.badge.pro{background:#3b2f0b;color:#fbbf24}.badge.revoked{background:#3f1d1d;color:var(--danger)}
table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:9px 8px;border-bottom:1px solid var(--line);font-size:14px}
th{color:var(--muted);font-weight:500}code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px}
button,.button{font:inherit;border:0;border-radius:8px;padding:8px 14px;cursor:pointer;background:var(--accent2);color:#fff;text-decoration:none;display:inline-block}
button.secondary{background:transparent;border:1px solid var(--line);color:var(--text)}button.danger{background:transparent;border:1px solid var(--danger);color:var(--danger)}
button:disabled{opacity:.5;cursor:default}input{font:inherit;padding:8px 10px;border-radius:8px;border:1px solid var(--line);background:#0b1324;color:var(--text);min-width:240px}
.secret{background:#0b1324;border:1px dashed var(--accent);border-radius:10px;padding:14px;margin-top:12px}
.secret code{display:block;word-break:break-all;margin:8px 0 10px;font-size:14px;color:#fff}
.error{color:var(--danger)}dialog{background:var(--card);color:var(--text);border:1px solid var(--line);border-radius:12px;padding:22px;max-width:420px}
dialog::backdrop{background:rgba(0,0,0,.55)}.chart{width:100%;height:140px}.chart rect{fill:var(--accent2)}.chart text{fill:var(--muted);font-size:10px}
.spaced{margin-top:14px}.center{text-align:center;padding:60px 20px}.row.centered{justify-content:center}.stats{display:flex;gap:28px}.stats b{display:block;font-size:22px}
`;

/** A complete page with the shared header and styles; `nonce` allows its inline script/style under the CSP. */
export function layout(title: string, body: string, nonce: string, headerRight = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>${escapeHtml(title)}</title><style nonce="${nonce}">${STYLES}</style></head>
<body><header><div class="brand">ip<span>intel</span></div><div>${headerRight}</div></header><main>${body}</main></body></html>`;
}

/** Security headers of every HTML page: no caching (secrets may be on it), no framing, strict CSP. */
export function htmlHeaders(nonce: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

/** A plain page explaining why sign-in failed, with a way to start again. */
export function messagePage(status: number, title: string, message: string, extraHeaders: [string, string][] = []): Response {
  const nonce = newNonce();
  const body = `<div class="card center"><h2>${escapeHtml(title)}</h2><p class="muted">${escapeHtml(message)}</p>
<p class="row centered"><a class="button" href="/auth/idp">Sign in again</a></p></div>`;
  const headers = new Headers(htmlHeaders(nonce));
  for (const [k, v] of extraHeaders) headers.append(k, v);
  return new Response(layout(title, body, nonce), { status, headers });
}
