/** GET /docs and the reference page's files under /docs/ (docs/page.ts), made on the first request. */
import { NOT_FOUND } from '../error-response.ts';
import { loadDocsSite, type DocsSite } from '../docs/page.ts';
import type { RouteHandler } from '../route-table.ts';

/** The reference page and its files; any other path under /docs is 404. */
export function apiReference(): RouteHandler {
  let site: Promise<DocsSite> | null = null;
  return async (_request, path) => {
    const answer = (await (site ??= loadDocsSite())).answer(path);
    if (!answer) throw NOT_FOUND;
    return answer;
  };
}
