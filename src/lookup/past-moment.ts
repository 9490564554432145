/**
 * The `at` of a past answer (`?at=`, `lookup --at`): a date (`2026-11-03`,
 * meaning 00:00:00 UTC of that day) or an RFC 3339 time, and the version of
 * the retained history that was being served at that moment. Anything else,
 * a moment before the retained history or in the future, is the documented
 * error, with the available range in `details`.
 */
import { ApiError, boundedProvided } from '../api-error.ts';
import type { HistoryRange, PastIndexes } from '../index/history/past-indexes.ts';
import type { HistoryVersion } from '../index/history/store.ts';
import type { ServingSnapshot } from './serving.ts';

/** Parts of an answer made from live lookups, never from the past: left out of a past answer (docs/http.md). */
export const NOT_HISTORICAL = ['crawler_dns_proof', 'rdap'] as const;

/** The moment asked for, the version served then and its snapshot. */
export interface PastMoment {
  atMs: number;
  version: HistoryVersion;
  snapshot: ServingSnapshot;
}

/** The `as_of` member of a past answer (declared in src/contract/v1.ts, AsOf). */
export function asOfOf(moment: PastMoment): { at: string; data_as_of: string; not_historical: string[] } {
  return { at: new Date(moment.atMs).toISOString(), data_as_of: moment.version.builtAt, not_historical: [...NOT_HISTORICAL] };
}

/** A JSON object text with `as_of` added as its last member. */
export function withAsOf(body: string, moment: PastMoment): string {
  const asOf = `"as_of":${JSON.stringify(asOfOf(moment))}`;
  return body === '{}' ? `{${asOf}}` : `${body.slice(0, -1)},${asOf}}`;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** The moment (ms) an `at` text names; throws INVALID_AT. */
export function parseAt(given: string): number {
  // An unencoded `+` of an offset arrives as a space (form encoding): it can only have been a `+`.
  const text = given.replace(/ (\d{2}:\d{2})$/, '+$1');
  const date = DATE.exec(text);
  const time = date ? null : TIME.exec(text);
  const parts = date ?? time;
  const ms = parts ? Date.parse(date ? `${text}T00:00:00Z` : text.toUpperCase()) : NaN;
  // Date.parse rolls 2026-02-30 over into March: the fields must survive the round trip.
  const fieldsHold = parts !== null && Number.isFinite(ms) && (time !== null || new Date(ms).toISOString().slice(0, 10) === text);
  const clockHolds = time === null || (Number(time[4]) < 24 && Number(time[5]) < 60 && Number(time[6]) < 60 && Number(time[2]) >= 1 && Number(time[2]) <= 12 && Number(time[3]) >= 1 && Number(time[3]) <= daysIn(Number(time[1]), Number(time[2])));
  if (!fieldsHold || !clockHolds) {
    throw new ApiError('INVALID_AT', 'at must be a date (YYYY-MM-DD, meaning 00:00:00 UTC) or an RFC 3339 time (2026-11-03T14:00:00Z)', { provided: boundedProvided(given) });
  }
  return ms;
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** `details` of an out-of-range `at`: the moments that can be asked for. */
function rangeDetails(provided: string, range: HistoryRange | null, retentionMs: number | null): Record<string, unknown> {
  return {
    provided: boundedProvided(provided),
    available_from: range ? new Date(range.fromMs).toISOString() : null,
    available_to: range ? new Date(range.toMs).toISOString() : null,
    retention: retentionMs === null ? 'off' : `${Math.round(retentionMs / 86_400_000)}d`,
  };
}

/** The version served at the moment `text` names, checked against the retained range at `nowMs`; throws INVALID_AT, AT_OUT_OF_RANGE or SERVICE_UNAVAILABLE (an unreadable history). */
export function versionForAt(history: PastIndexes | undefined, text: string, nowMs: number): { atMs: number; version: HistoryVersion; newest: boolean } {
  const atMs = parseAt(text);
  if (!history) throw new ApiError('AT_OUT_OF_RANGE', 'No history is kept here (IPINTEL_HISTORY=off): only current answers', rangeDetails(text, null, null));
  let catalog;
  try {
    catalog = history.catalog();
  } catch (e) {
    throw new ApiError('SERVICE_UNAVAILABLE', 'The history cannot be read; current answers are unaffected', { provided: boundedProvided(text), reason: (e as Error).message });
  }
  const range = history.range(catalog, nowMs);
  const version = history.versionAt(catalog, atMs);
  if (atMs > nowMs) throw new ApiError('AT_OUT_OF_RANGE', 'at is in the future', rangeDetails(text, range, history.config.retentionMs));
  if (range === null || version === null || atMs < range.fromMs) throw new ApiError('AT_OUT_OF_RANGE', 'at is before the retained history', rangeDetails(text, range, history.config.retentionMs));
  return { atMs, version, newest: version === catalog.versions.at(-1) };
}
