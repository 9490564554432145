/**
 * What each swap of the refresher changed: the diff of the index it
 * replaced and the one it swapped in (src/lookup/diff/), compared on a
 * thread of its own so a serving process keeps answering and gets the
 * memory of both files back when it ends, summed up as one log line of
 * headline counts and kept, the last SWAPS_KEPT of them, in a state file
 * beside the index (`<index>.swaps.json`, written atomically) that
 * /v1/data/status (admin) and /metrics read. Across the kept swaps, ranges
 * whose country or a flag went back and forth are listed as `flapping`.
 */
import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../file-io/atomic-file.ts';
import { DIFF_FLAG_FIELDS, type ChangedSpaceBody, type DiffField, type FlappingRangeBody, type IndexDiffBody, type SwapSummaryBody } from '../contract/diff.ts';
import { diffFilesInWorker } from '../lookup/diff/in-worker.ts';

/** Swaps whose summaries are kept. */
export const SWAPS_KEPT = 10;
/** Largest changed ranges kept per swap, field and family: what flapping is found among. */
const RANGES_KEPT = 50;
/** The fields whose back-and-forth is flapping. */
const FLAP_FIELDS: readonly DiffField[] = ['country', ...DIFF_FLAG_FIELDS];

/** The summaries file of an index. */
export function swapSummariesPath(indexPath: string): string {
  return `${indexPath}.swaps.json`;
}

/** The kept summaries, oldest first ([] when the file is missing or unreadable: it is a record, never an input to serving). */
export function loadSwapSummaries(path: string): SwapSummaryBody[] {
  try {
    const data = JSON.parse(readFileSync(path, 'utf8')) as { swaps?: unknown };
    return Array.isArray(data.swaps) ? (data.swaps as SwapSummaryBody[]).slice(-SWAPS_KEPT) : [];
  } catch {
    return [];
  }
}

/** A swap's summary of a diff (flapping filled in by recordSwap). */
function summaryOf(diff: IndexDiffBody, swappedAt: number): SwapSummaryBody {
  const summary: SwapSummaryBody = {
    swapped_at: new Date(swappedAt).toISOString(),
    old_built_at: diff.old.built_at,
    new_built_at: diff.new.built_at,
    changed: {},
    flagged: {},
    unflagged: {},
    ranges: [],
    flapping: [],
    seconds: diff.seconds,
  };
  for (const f of diff.fields) {
    summary.changed[f.field] = f.changed;
    if (f.flagged) summary.flagged[f.field] = f.flagged;
    if (f.unflagged) summary.unflagged[f.field] = f.unflagged;
    if (FLAP_FIELDS.includes(f.field)) for (const r of f.largest) summary.ranges.push({ field: f.field, family: r.family, range: r.range, cidr: r.cidr, before: r.before, after: r.after });
  }
  return summary;
}

/**
 * Ranges whose value went back and forth across the swaps (oldest first):
 * the values a range took, change after change, hold one value twice with
 * another between (A -> B -> A). A range is the same range only with the
 * same bounds in each swap.
 */
export function flappingOf(swaps: readonly SwapSummaryBody[]): FlappingRangeBody[] {
  const seen = new Map<string, { r: SwapSummaryBody['ranges'][number]; values: Array<string | number | boolean | null> }>();
  for (const s of swaps) {
    for (const r of s.ranges) {
      const key = `${r.field}|${r.family}|${r.range}`;
      const h = seen.get(key);
      if (h === undefined) seen.set(key, { r, values: [r.before, r.after] });
      else {
        // A change that does not start from the last value seen means a change in between went unrecorded.
        if (h.values[h.values.length - 1] !== r.before) h.values.push(r.before);
        h.values.push(r.after);
      }
    }
  }
  const out: FlappingRangeBody[] = [];
  for (const { r, values } of seen.values()) {
    const back = values.some((v, i) => values.indexOf(v) < i - 1);
    if (back) out.push({ field: r.field, family: r.family, range: r.range, cidr: r.cidr, values, changes: values.length - 1 });
  }
  return out;
}

/** The one log line of a swap: the changed space of each group that changed, flags as +flagged/-unflagged. */
function headlineOf(s: SwapSummaryBody): string {
  const parts: string[] = [];
  for (const [field, c] of Object.entries(s.changed) as Array<[DiffField, ChangedSpaceBody]>) {
    if (c.ipv4_addresses === 0 && c.ipv6_64s === 0) continue;
    const f = s.flagged[field];
    const u = s.unflagged[field];
    parts.push(f && u ? `${field} +${f.ipv4_addresses}/-${u.ipv4_addresses} IPv4 +${f.ipv6_64s}/-${u.ipv6_64s} /64` : `${field} ${c.ipv4_addresses} IPv4 ${c.ipv6_64s} /64`);
  }
  const flapping = s.flapping.length > 0 ? `; ${s.flapping.length} range(s) flapping` : '';
  return `feeds: swap changed ${parts.length > 0 ? parts.join(', ') : 'nothing'}${flapping} (compared in ${s.seconds} s)`;
}

export interface SwapRecordOptions {
  indexPath: string;
  log: (line: string) => void;
  now: () => number;
}

/**
 * Compares the index a swap replaced (`beforePath`: a path that still opens
 * it, such as /dev/fd/N of a descriptor the refresher kept, its file being
 * gone) with the file swapped in, logs the headline line and keeps the
 * summary. Never throws: a summary is a record of the swap, and failing to
 * make one changes nothing that is served.
 */
export function recordSwap(beforePath: string, afterPath: string, o: SwapRecordOptions): Promise<SwapSummaryBody | null> {
  // One summary at a time: each appends to the file the previous one wrote.
  const next = queue.then(() => summarize(beforePath, afterPath, o));
  queue = next;
  return next;
}

let queue: Promise<unknown> = Promise.resolve();

async function summarize(beforePath: string, afterPath: string, o: SwapRecordOptions): Promise<SwapSummaryBody | null> {
  try {
    const diff = await diffFilesInWorker(beforePath, afterPath, { top: RANGES_KEPT });
    const summary = summaryOf(diff, o.now());
    const path = swapSummariesPath(o.indexPath);
    const swaps = [...loadSwapSummaries(path), summary].slice(-SWAPS_KEPT);
    summary.flapping = flappingOf(swaps);
    writeFileAtomic(path, `${JSON.stringify({ swaps }, null, 1)}\n`);
    o.log(headlineOf(summary));
    return summary;
  } catch (e) {
    o.log(`feeds: the swap's summary could not be made: ${(e as Error).message}`);
    return null;
  }
}
