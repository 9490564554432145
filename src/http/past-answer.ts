/**
 * What an answer as of a past moment (`?at=`, docs/http.md) adds to the
 * route that answers it: the tier rule (src/tiers.ts), the snapshot of the
 * index served at that moment (src/lookup/past-serving.ts), and the answer's
 * headers: `X-Data-As-Of`, an ETag, and a long public
 * lifetime for an explicit address (the answer can never change).
 */
import { ApiError } from '../api-error.ts';
import { pastServingOf } from '../lookup/past-serving.ts';
import { versionForAt, type PastMoment } from '../lookup/past-moment.ts';
import { TIERS, type Tier } from '../tiers.ts';
import { CORS_RESPONSE_HEADERS } from './cors.ts';
import { JSON_TYPE } from './error-response.ts';
import { queryValues } from './request-params.ts';
import type { AppServices } from './services.ts';

/** A past answer of an explicit address never changes: a year, and `immutable`. */
const PAST_CACHEABLE = 'public, max-age=31536000, immutable';
const AT_KEY: readonly string[] = ['at'];

/** The `at` of a request URL (null: none); throws INVALID_AT when it is given more than once. */
export function atOf(url: string): string | null {
  // Most queries never name `at`: one scan, no parse.
  if (!url.includes('at=')) return null;
  const [values] = queryValues(url, AT_KEY);
  if (values === undefined) return null;
  if (values.length > 1) throw new ApiError('INVALID_AT', 'at must be given once', { provided: values.join(',') });
  return values[0];
}

/** The snapshot answering `at` for a caller's tier: the tier rule first, then the range; throws (or rejects with) the documented errors. */
export function pastMomentOf(services: AppServices, at: string, tier: Tier): PastMoment | Promise<PastMoment> {
  if (!TIERS[tier].pastAnswers) {
    throw tier === 'anonymous'
      ? new ApiError('UNAUTHORIZED', 'Answers as of a past moment need an API key (X-API-Key)', { parameter: 'at' })
      : new ApiError('FORBIDDEN', `Answers as of a past moment are not part of the ${tier} tier`, { parameter: 'at', tier });
  }
  const nowMs = services.now();
  const serving = services.history ? pastServingOf(services.serving, services.history) : null;
  const kept = serving?.recall(at, nowMs);
  if (kept) return kept;
  const { atMs, version, newest } = versionForAt(services.history, at, nowMs);
  const snapshot = serving!.snapshotOf(version, atMs, newest);
  if (snapshot instanceof Promise) return snapshot.then((s) => serving!.remember(at, { atMs, version, snapshot: s }));
  return serving!.remember(at, { atMs, version, snapshot });
}

/** The response of a past answer: `X-Data-As-Of`, an ETag of the body, 304 when the client holds it; `shared`: an explicit address (else no-store, as today). */
export function pastResponse(request: Request, body: string, moment: PastMoment, shared: boolean): Response {
  const etag = `"${Bun.hash.xxHash3(body).toString(16)}"`;
  const headers = new Headers({ ...CORS_RESPONSE_HEADERS, 'content-type': JSON_TYPE, 'cache-control': shared ? PAST_CACHEABLE : 'no-store', 'x-data-as-of': moment.version.builtAt, etag });
  const held = request.headers.get('if-none-match');
  if (held !== null && held.split(',').some((t) => t.trim() === etag || t.trim() === `W/${etag}`)) return new Response(null, { status: 304, headers });
  return new Response(body, { headers });
}
