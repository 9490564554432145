/**
 * Fetching a publisher's history (the signed manifest's `history`): its
 * history manifest (bounded, its sha256 the signed one), then the recipes
 * and packs of the versions this server keeps (IPINTEL_HISTORY) that it
 * does not hold, each bounded by its signed size and checked against its
 * signed sha256 as it streams, the whole under HISTORY_PULL_FACTOR times the
 * index and within the free space; then the history thread checks every
 * version they touch rebuilds to its signed sha256 and adopts the
 * publisher's timeline (src/index/history/history-adopt.ts). A failure
 * leaves the history folder as it was.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ADOPTED_MANIFEST, type AdoptOutcome } from '../history/history-adopt.ts';
import { HistoryRefusal, MAX_HISTORY_MANIFEST_BYTES, parseHistoryManifest, type HistoryManifest } from '../history/history-manifest.ts';
import type { HistoryJobs } from '../history/jobs.ts';
import type { HistoryConfig } from '../history/past-indexes.ts';
import { firstRetained, readCatalog } from '../history/store.ts';
import { clearDeferred, deferRecording, deferredRecording } from '../history/deferred-recording.ts';
import { recordIndexAt } from '../history/recorder.ts';
import type { HistoryTransfer } from '../publish/signed-manifest.ts';
import { sha256OfFile } from '../file-sha256.ts';
import { FREE_SPACE_MARGIN_BYTES, freeBytes } from './free-space.ts';
import { downloadPlain, streamBody, type TransferContext } from './index-transfer.ts';
import type { HistoryPullStatus } from './pull-status-file.ts';

/** The most a history pull downloads, in times the index's signed size (a month of daily history is about 2.2 times: BENCHMARKS.md); older versions past it are not fetched. */
export const HISTORY_PULL_FACTOR = 16;
/** Staging folder of fetched files inside the history folder, until they are checked and moved in. */
const STAGING = 'fetched';

/** What a history pull needs. */
export interface HistoryPullPlan {
  transfer: HistoryTransfer;
  manifestUrl: string;
  /** The signed size of the index: the download cap is a multiple of it. */
  indexBytes: number;
  config: HistoryConfig;
  jobs: HistoryJobs;
  nowMs: number;
}

/** What a history pull did. */
export interface HistoryPullResult extends AdoptOutcome {
  /** Files fetched (recipes and packs) and the versions left out by the download cap. */
  fetched: number;
  capped: number;
}

/** Fetches what this server lacks of the publisher's history and adopts it; throws (HistoryRefusal, TransferError, Error) with the history untouched. `counted` sees every byte downloaded. */
export async function pullHistory(plan: HistoryPullPlan, ctx: TransferContext, counted: (n: number) => void): Promise<HistoryPullResult> {
  const { transfer, config } = plan;
  if (transfer.size > MAX_HISTORY_MANIFEST_BYTES) throw new HistoryRefusal(`the history manifest is ${transfer.size} bytes, more than ${MAX_HISTORY_MANIFEST_BYTES}`);
  const chunks: Uint8Array[] = [];
  const got = await streamBody(new URL(transfer.file, plan.manifestUrl).href, 'history manifest', transfer.size, ctx, counted, (c) => void chunks.push(c));
  if (got.sha256 !== transfer.sha256) throw new HistoryRefusal('the history manifest sha256 differs from its signed manifest');
  const published = parseHistoryManifest(Buffer.concat(chunks).toString('utf8'), plan.nowMs);
  mkdirSync(config.dir, { recursive: true });
  const held = heldFiles(config.dir, published);
  const { kept, wanted, capped } = choose(published, held, plan.nowMs, config.retentionMs, plan.indexBytes * HISTORY_PULL_FACTOR);
  const bytes = wanted.reduce((s, n) => s + published.files[n].size, 0);
  const free = freeBytes(config.dir);
  if (free !== null && free < bytes + FREE_SPACE_MARGIN_BYTES) throw new HistoryRefusal(`not enough free space in ${config.dir} for ${(bytes / 1048576).toFixed(1)} MiB of history (${(free / 1048576).toFixed(1)} MiB free)`);
  const staging = join(config.dir, STAGING);
  mkdirSync(staging, { recursive: true });
  // A file fetched by an earlier attempt that still matches its signed sum is not fetched again; anything else there goes.
  for (const name of readdirSync(staging)) if (!wanted.includes(name)) rmSync(join(staging, name), { force: true });
  for (const name of wanted) {
    const path = join(staging, name);
    const f = published.files[name];
    if (existsSync(path) && statSync(path).size === f.size && sha256OfFile(path) === f.sha256) continue;
    rmSync(path, { force: true });
    try {
      await downloadPlain(new URL(name, new URL(transfer.file, plan.manifestUrl)).href, path, f.size, ctx, counted, f.sha256, `history file ${name}`);
    } catch (e) {
      rmSync(path, { force: true });
      throw e;
    }
  }
  const outcome = await plan.jobs.run<AdoptOutcome>({ op: 'adopt', dir: config.dir, staging, manifest: kept, fetched: wanted, nowMs: plan.nowMs, retentionMs: config.retentionMs });
  rmSync(staging, { recursive: true, force: true });
  return { ...outcome, fetched: wanted.length, capped };
}

/** The files of the history adopted last that are still in the folder with their signed size and sum (the puller's own recordings never count). */
function heldFiles(dir: string, published: HistoryManifest): Set<string> {
  const held = new Set<string>();
  let adopted: HistoryManifest;
  try {
    adopted = JSON.parse(readFileSync(join(dir, ADOPTED_MANIFEST), 'utf8')) as HistoryManifest;
  } catch {
    return held;
  }
  for (const [name, f] of Object.entries(published.files)) {
    const was = adopted.files?.[name];
    if (was && was.sha256 === f.sha256 && was.size === f.size && statSync(join(dir, name), { throwIfNoEntry: false })?.size === f.size) held.add(name);
  }
  return held;
}

/**
 * The versions kept: those IPINTEL_HISTORY retains, newest first while the
 * files not held fit `capBytes`, with only their
 * files; `wanted` are the files to fetch. Refused when not even the newest fits.
 */
function choose(published: HistoryManifest, held: Set<string>, nowMs: number, retentionMs: number, capBytes: number): { kept: HistoryManifest; wanted: string[]; capped: number } {
  const versions = published.versions;
  const first = firstRetained(versions.map((v) => Date.parse(v.published_from)), nowMs, retentionMs);
  const wanted = new Set<string>();
  let bytes = 0;
  let from = versions.length;
  for (let i = versions.length - 1; i >= first; i--) {
    const names = [versions[i].recipe, ...versions[i].packs.map((p) => `${p}.pack`)].filter((n) => !held.has(n) && !wanted.has(n));
    const more = names.reduce((s, n) => s + published.files[n].size, 0);
    if (bytes + more > capBytes) break;
    for (const n of names) wanted.add(n);
    bytes += more;
    from = i;
  }
  if (from === versions.length) throw new HistoryRefusal(`the newest version's history files are more than the download cap (${HISTORY_PULL_FACTOR} times the index)`);
  const kept = versions.slice(from);
  const files: HistoryManifest['files'] = {};
  for (const v of kept) for (const n of [v.recipe, ...v.packs.map((p) => `${p}.pack`)]) files[n] = published.files[n];
  return { kept: { format: published.format, versions: kept, files }, wanted: [...wanted], capped: from - first };
}


/** Longest wait, in poll intervals, before a refused history is fetched again (a new one is fetched at once). */
const MAX_RETRY_POLLS = 12;

/** Keeps a puller's history following its publisher's: adopts each new history the served manifest names, backing off after a refusal. */
export class HistoryFollower {
  readonly status: HistoryPullStatus = { adopted_sha256: null, versions: 0, last_adopted: null, last_error: null, last_error_at: null, downloaded_bytes: 0 };
  private failures = 0;
  private retryAtMs = 0;
  private failedSha: string | null = null;

  constructor(
    private readonly config: HistoryConfig,
    private readonly jobs: HistoryJobs,
    private readonly pollMs: number,
    private readonly log: (line: string) => void,
  ) {}

  /** Before a swap to a version whose manifest names a publisher's history: the server's recorder leaves it to that history, or to recordUnlessHeld (deferred-recording.ts). */
  deferRecording(sha256: string, servedFromMs: number): void {
    try {
      deferRecording(this.config.dir, sha256, servedFromMs);
    } catch (e) {
      this.log(`index pull: cannot defer recording the pulled index (${(e as Error).message}); the server records it itself`);
    }
  }

  /** After follow(): records the served version `sha256` (at `path`) when it was deferred and the history adopted does not hold it (none adopted, refused, or without it); never throws (tried again at the next poll). */
  async recordUnlessHeld(sha256: string, path: string): Promise<void> {
    const deferred = deferredRecording(this.config.dir);
    if (deferred?.sha256 !== sha256) return;
    try {
      if (!readCatalog(this.config.dir).versions.some((v) => v.id === sha256)) {
        const outcome = await recordIndexAt(this.config, this.jobs, path, deferred.servedFromMs, 'pull');
        if (outcome?.recorded) this.log(`index pull: the publisher's history does not hold the pulled index; recorded it into this server's history (${(outcome.bytesWritten / 1048576).toFixed(1)} MiB)`);
      }
      clearDeferred(this.config.dir, sha256);
    } catch (e) {
      this.log(`index pull: the pulled index was not recorded into the history (${(e as Error).message}); tried again at the next poll`);
    }
  }

  /** Adopts the history `transfer` names unless it is the one adopted or a refused one still backed off; never throws (a refusal is reported and logged). */
  async follow(transfer: HistoryTransfer | undefined, manifestUrl: string, indexBytes: number, ctx: TransferContext, nowMs: number): Promise<void> {
    if (!transfer || transfer.sha256 === this.status.adopted_sha256) return;
    if (transfer.sha256 === this.failedSha && nowMs < this.retryAtMs) return;
    try {
      const done = await pullHistory({ transfer, manifestUrl, indexBytes, config: this.config, jobs: this.jobs, nowMs }, ctx, (n) => {
        this.status.downloaded_bytes += n;
      });
      Object.assign(this.status, { adopted_sha256: transfer.sha256, versions: done.versions, last_adopted: new Date(nowMs).toISOString(), last_error: null });
      this.failures = 0;
      this.failedSha = null;
      const capped = done.capped > 0 ? `; ${done.capped} older left out by the download cap` : '';
      this.log(`index pull: the publisher's history adopted (${done.versions} versions, ${done.fetched} files fetched, ${done.checked} versions checked against their signed sha256${capped})`);
    } catch (e) {
      const reason = ctx.stopped() ? 'puller stopped' : (e as Error).message;
      this.failures = transfer.sha256 === this.failedSha ? this.failures + 1 : 1;
      this.failedSha = transfer.sha256;
      this.retryAtMs = nowMs + this.pollMs * Math.min(MAX_RETRY_POLLS, 2 ** (this.failures - 1));
      Object.assign(this.status, { last_error: reason, last_error_at: new Date(nowMs).toISOString() });
      this.log(`index pull: the publisher's history refused (${reason}); the previous history and the served index stay`);
    }
  }
}
