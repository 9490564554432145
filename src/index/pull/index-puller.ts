/**
 * Pulling a published index (IPINTEL_INDEX_URL): a conditional GET of the
 * signed manifest every poll; the index itself is downloaded only when the
 * manifest names a file other than the one served, then checked by
 * verifyIndexFile (signature, build-time window, size, sha256, the index's
 * own checks) and not older than what is served, before an atomic rename and
 * the swap. At start the file already on disk is checked the same way against
 * its sidecar manifest, and is served only when it passes; partial downloads
 * of an earlier process are removed. Every failure keeps the served index and
 * is reported; polls back off while they fail.
 */
import type { KeyObject } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { FREE_SPACE_MARGIN_BYTES, freeBytes } from './free-space.ts';
import { basename, dirname, join } from 'node:path';
import { MAX_MANIFEST_BYTES, ManifestRefusal, type PublishedManifest } from '../publish/signed-manifest.ts';
import { expiresAt } from '../publish/manifest-window.ts';
import { acceptManifest, verifyIndexFile, type ManifestRules } from '../publish/verify-index-file.ts';
import { readCappedBytes } from '../../file-io/read-capped.ts';
import { writePullStatus, type PollOutcome, type PullStatus } from './pull-status-file.ts';
import { TransferError, transferIndex, type TransferResult } from './index-transfer.ts';
import { xdelta3Path, XDELTA3_MISSING } from '../publish/index-delta.ts';

export type { PollOutcome, PullStatus };
import { checkPullUrl } from './pull-url.ts';
import { fileIdentity, sidecarPath, writeSidecar, type FileIdentity } from './pulled-file.ts';
import { HistoryFollower } from './history-pull.ts';
import type { HistoryConfig } from '../history/past-indexes.ts';
import type { HistoryJobs } from '../history/jobs.ts';

export interface PullerOptions {
  /** URL of the published index; the manifest is this plus `.json`. */
  indexUrl: string;
  publicKey: KeyObject;
  /** The local file the pulled index is placed at (the server's IPINTEL_INDEX). */
  localPath: string;
  pollMs: number;
  /** Oldest build believed (IPINTEL_INDEX_MAX_AGE). */
  maxAgeMs: number;
  /** Swaps the placed file in (every worker); a throw counts as a failed poll. */
  swap: (path: string) => Promise<void>;
  log?: (line: string) => void;
  now?: () => number;
  /** Keep the status in a file beside the pulled index, for every worker's status and metrics. */
  writeStatus?: boolean;
  /** Bounds of one transfer. */
  manifestTimeoutMs?: number;
  indexTimeoutMs?: number;
  /** The xdelta3 program that applies deltas (null: none; full files only); found on PATH when undefined. */
  xdelta3?: string | null;
  /** This server's history (IPINTEL_HISTORY) and its thread: the publisher's history is fetched into it when the manifest names one; absent: none is. */
  history?: { config: HistoryConfig; jobs: HistoryJobs };
}

/** Why a poll failed; the message carries no fetched bytes. */
export class PullError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PullError';
  }
}

const FIRST_RETRY_MS = 5_000;
const MAX_BACKOFF_FACTOR = 12;

/** The verified index in place and the identity of its file when it was verified. */
interface Served {
  manifest: PublishedManifest;
  file: FileIdentity;
}

/** Polls a published index and swaps in each new verified version. */
export class IndexPuller {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<PollOutcome> | null = null;
  private validators: { etag: string | null; lastModified: string | null } = { etag: null, lastModified: null };
  private served: Served | null = null;
  private adopted = false;
  private closed = false;
  /** Aborted by close(): a transfer in flight (a stalled body read too) stops at once. */
  private readonly stopping = new AbortController();
  private readonly log: (line: string) => void;
  private readonly now: () => number;
  readonly status: PullStatus;

  constructor(private readonly options: PullerOptions) {
    this.log = options.log ?? ((l) => console.error(l));
    this.now = options.now ?? Date.now;
    this.status = {
      source: 'pull',
      url: options.indexUrl,
      last_check: null,
      last_change: null,
      last_error: null,
      last_error_at: null,
      sha256: null,
      built_at: null,
      expires_at: null,
      next_check: null,
      consecutive_failures: 0,
      polls: { updated: 0, not_modified: 0, unchanged: 0, failed: 0 },
      last_transfer: null,
      downloaded_bytes: { delta: 0, compressed: 0, plain: 0 },
      updates_by: { delta: 0, compressed: 0, plain: 0 },
      history: null,
    };
    const h = options.history;
    this.history = h ? new HistoryFollower(h.config, h.jobs, options.pollMs, this.log) : null;
    this.status.history = this.history?.status ?? null;
    this.xdelta3 = options.xdelta3 === undefined ? xdelta3Path() : options.xdelta3;
    if (this.xdelta3 === null) this.log(`index pull: ${XDELTA3_MISSING}`);
  }

  private readonly xdelta3: string | null;
  /** Follows the publisher's history (null: IPINTEL_HISTORY=off). */
  private readonly history: HistoryFollower | null;

  /**
   * Removes partial downloads an earlier process left, then checks the file at
   * the local path against its sidecar manifest with verifyIndexFile; returns
   * whether it verified (only then may it be served). Runs once.
   */
  adoptLocal(): boolean {
    if (this.adopted) return this.served !== null;
    this.adopted = true;
    this.sweepPartialDownloads();
    const { localPath } = this.options;
    let text: string;
    try {
      text = readFileSync(sidecarPath(localPath), 'utf8');
    } catch {
      if (existsSync(localPath)) this.log(`index pull: ${localPath} has no manifest beside it (${basename(sidecarPath(localPath))}): not served until a verified pull replaces it`);
      return false;
    }
    // The identity first: a change while the file is hashed shows at the next poll.
    const file = fileIdentity(localPath);
    try {
      this.served = { manifest: verifyIndexFile(localPath, text, this.rules()), file };
    } catch (e) {
      this.log(`index pull: ${localPath} is not served (${(e as Error).message}); pulling it again`);
      return false;
    }
    this.setServed(this.served.manifest);
    return true;
  }

  /** Checks the local file (adoptLocal), then polls now (a poll() called right after joins it) and every poll interval after; never throws. */
  start(): void {
    this.adoptLocal();
    this.status.next_check = new Date(this.now()).toISOString();
    void this.pollThenSchedule();
  }

  /** Stops polling and any transfer in flight; resolves once the poll in flight has settled (its partial file removed). */
  async close(): Promise<void> {
    this.closed = true;
    this.stopping.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    this.options.history?.jobs.close();
  }

  /** One poll (or the one in flight); resolves with its outcome, never rejects. */
  poll(): Promise<PollOutcome> {
    this.running ??= this.pollOnce()
      .then(async (outcome) => {
        this.status.polls[outcome]++;
        // The index's state is shown at once; the publisher's history (minutes, for a fresh server) follows it.
        if (this.options.writeStatus) writePullStatus(this.options.localPath, this.status);
        const served = this.served?.manifest;
        if (outcome !== 'failed' && served && this.history) {
          await this.history.follow(served.history, `${this.options.indexUrl}.json`, served.size, this.transferContext(), this.now());
          await this.history.recordUnlessHeld(served.sha256, this.options.localPath);
        }
        return outcome;
      })
      .finally(() => {
        this.running = null;
        if (this.options.writeStatus) writePullStatus(this.options.localPath, this.status);
      });
    return this.running;
  }

  private rules(): ManifestRules {
    return { publicKey: this.options.publicKey, now: this.now(), maxAgeMs: this.options.maxAgeMs };
  }

  private setServed(manifest: PublishedManifest): void {
    this.status.sha256 = manifest.sha256;
    this.status.built_at = manifest.built_at;
    this.status.expires_at = expiresAt(manifest.built_at, this.options.maxAgeMs);
  }

  /** Removes `.<index>.pull-*` files beside the index: downloads of a process that was stopped or killed mid-way (one puller per index path). */
  private sweepPartialDownloads(): void {
    const dir = dirname(this.options.localPath);
    const prefix = `.${basename(this.options.localPath)}.pull-`;
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.startsWith(prefix));
    } catch {
      return;
    }
    for (const name of names) rmSync(join(dir, name), { force: true });
    if (names.length > 0) this.log(`index pull: removed ${names.length} partial download${names.length === 1 ? '' : 's'} left in ${dir}`);
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.status.next_check = new Date(this.now() + delayMs).toISOString();
    if (this.options.writeStatus) writePullStatus(this.options.localPath, this.status);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.pollThenSchedule();
    }, delayMs);
    this.timer.unref?.();
  }

  private async pollThenSchedule(): Promise<void> {
    await this.poll();
    this.schedule(this.nextDelay());
  }

  /** The poll interval (±10 % so a fleet does not poll in step); longer while polls fail, shorter while nothing is served yet. */
  private nextDelay(): number {
    const { pollMs } = this.options;
    const failures = this.status.consecutive_failures;
    const jitter = 0.9 + Math.random() * 0.2;
    if (failures === 0) return Math.round(pollMs * jitter);
    if (this.served === null) return Math.round(Math.min(pollMs, FIRST_RETRY_MS * 2 ** (failures - 1)) * jitter);
    return Math.round(pollMs * Math.min(MAX_BACKOFF_FACTOR, 2 ** (failures - 1)) * jitter);
  }

  private async pollOnce(): Promise<PollOutcome> {
    this.status.last_check = new Date(this.now()).toISOString();
    try {
      const outcome = await this.check();
      this.status.consecutive_failures = 0;
      return outcome;
    } catch (e) {
      const reason = e instanceof PullError || e instanceof ManifestRefusal ? e.message : `unexpected: ${(e as Error).message}`;
      this.status.consecutive_failures++;
      this.status.last_error = reason;
      this.status.last_error_at = this.status.last_check;
      this.log(`index pull: ${reason}; the served index stays (attempt ${this.status.consecutive_failures})`);
      return 'failed';
    }
  }

  /** A served file changed on disk since it was verified (edited, replaced) is checked again; when it fails, the next download repairs it. */
  private recheckServedFile(): void {
    if (!this.served) return;
    const now = fileIdentity(this.options.localPath);
    const was = this.served.file;
    if (now.ino === was.ino && now.size === was.size && now.mtimeMs === was.mtimeMs) return;
    try {
      verifyIndexFile(this.options.localPath, JSON.stringify(this.served.manifest), this.rules());
      this.served.file = now;
    } catch (e) {
      this.log(`index pull: the served ${this.options.localPath} changed on disk and no longer verifies (${(e as Error).message}); pulling it again`);
      this.served = null;
      this.validators = { etag: null, lastModified: null };
    }
  }

  private async check(): Promise<PollOutcome> {
    this.recheckServedFile();
    const manifestUrl = `${this.options.indexUrl}.json`;
    await allowed(manifestUrl);
    const headers: Record<string, string> = {};
    if (this.validators.etag) headers['if-none-match'] = this.validators.etag;
    if (this.validators.lastModified) headers['if-modified-since'] = this.validators.lastModified;
    const res = await this.fetchBounded(manifestUrl, headers, this.options.manifestTimeoutMs ?? 30_000);
    if (res.status === 304 && this.served) return 'not_modified';
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new PullError(`manifest answered HTTP ${res.status}`);
    }
    const body = await readCappedBytes(res, MAX_MANIFEST_BYTES);
    if (body === null) throw new PullError(`manifest larger than ${MAX_MANIFEST_BYTES} bytes`);
    const text = new TextDecoder().decode(body);
    const manifest = acceptManifest(text, this.rules());
    const validators = { etag: res.headers.get('etag'), lastModified: res.headers.get('last-modified') };
    const served = this.served?.manifest;
    if (served?.sha256 === manifest.sha256) {
      this.validators = validators;
      // The same file signed again with more (a history added): kept, so the history is followed, after a restart too.
      if (this.served && JSON.stringify(served) !== JSON.stringify(manifest)) {
        writeSidecar(this.options.localPath, manifest);
        this.served.manifest = manifest;
      }
      return 'unchanged';
    }
    // Only a pulled index counts: a fallback default built here is replaced by any verified publish.
    if (served && Date.parse(manifest.built_at) < Date.parse(served.built_at)) {
      throw new PullError(`manifest built ${manifest.built_at} is older than the served index (rollback refused)`);
    }
    const fileUrl = new URL(manifest.file, manifestUrl).href;
    await allowed(fileUrl);
    const dir = dirname(this.options.localPath);
    checkFreeSpace(dir, manifest.size);
    const tmp = join(dir, `.${basename(this.options.localPath)}.pull-${process.pid}-${this.now()}`);
    let transfer: TransferResult;
    try {
      const served = this.served ? { path: this.options.localPath, sha256: this.served.manifest.sha256 } : null;
      transfer = await transferIndex({ manifest, manifestUrl, served, tmp }, this.transferContext(), (path) => verifyIndexFile(path, text, this.rules()));
      renameSync(tmp, this.options.localPath);
      writeSidecar(this.options.localPath, manifest);
    } catch (e) {
      rmSync(tmp, { force: true });
      if (e instanceof TransferError) this.countDownloads(e.bytes);
      if (e instanceof PullError || e instanceof ManifestRefusal || e instanceof TransferError) throw new PullError(e.message);
      throw new PullError(`downloaded index refused: ${(e as Error).message}`);
    }
    this.countDownloads(transfer.bytes);
    // The publisher's history will hold this version: the server's recorder does not write it (an index-sized keyframe the adoption would prune).
    if (manifest.history) this.history?.deferRecording(manifest.sha256, this.now());
    await this.options.swap(this.options.localPath);
    this.served = { manifest, file: fileIdentity(this.options.localPath) };
    this.validators = validators;
    this.setServed(manifest);
    this.status.last_change = new Date(this.now()).toISOString();
    const downloaded = transfer.bytes.delta + transfer.bytes.compressed + transfer.bytes.plain;
    this.status.last_transfer = { method: transfer.method, downloaded_bytes: downloaded, index_bytes: manifest.size, fallbacks: transfer.fallbacks };
    this.status.updates_by[transfer.method]++;
    const fellBack = transfer.fallbacks.length > 0 ? `; not cheaper because ${transfer.fallbacks.join('; ')}` : '';
    this.log(
      `index pull: swapped in ${manifest.file} (built ${manifest.built_at}, ${mib(manifest.size)}) by ${transfer.method}, ${mib(downloaded)} downloaded${fellBack}`,
    );
    return 'updated';
  }

  /** Adds one pull's downloads (failed attempts too) to the status's totals. */
  private countDownloads(bytes: TransferResult['bytes'] | undefined): void {
    if (!bytes) return;
    for (const method of Object.keys(bytes) as (keyof typeof bytes)[]) this.status.downloaded_bytes[method] += bytes[method];
  }

  /** What a transfer needs: bounded GETs, the stop signal, xdelta3. */
  private transferContext() {
    const timeoutMs = this.options.indexTimeoutMs ?? 30 * 60_000;
    return {
      get: (url: string) => this.fetchBounded(url, {}, timeoutMs),
      stopped: () => this.closed,
      signal: this.stopping.signal,
      xdelta3: this.xdelta3,
      applyTimeoutMs: timeoutMs,
    };
  }

  /** A failed transfer in words: stopped, timed out or a connection error. */
  private transferFailure(e: unknown): string {
    if (this.closed) return 'puller stopped';
    return (e as Error).name === 'TimeoutError' ? 'timed out' : 'connection error';
  }

  /** GET without following redirects (a redirect is refused: the URL is the operator's), within a deadline; close() aborts it. */
  private async fetchBounded(url: string, headers: Record<string, string>, timeoutMs: number): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(url, { headers, redirect: 'manual', signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), this.stopping.signal]) });
    } catch (e) {
      throw new PullError(`${new URL(url).host} unreachable (${this.transferFailure(e)})`);
    }
    if (res.status >= 300 && res.status < 400 && res.status !== 304) {
      await res.body?.cancel();
      throw new PullError(`HTTP ${res.status} redirect refused (point IPINTEL_INDEX_URL at the final address)`);
    }
    return res;
  }
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

/** Refuses a download the folder has no room for (with the margin), so a pull never fills the disk the server writes to. */
function checkFreeSpace(dir: string, bytes: number): void {
  const free = freeBytes(dir);
  if (free !== null && free < bytes + FREE_SPACE_MARGIN_BYTES) {
    throw new PullError(`not enough free space in ${dir} for the ${(bytes / 1048576).toFixed(1)} MiB index (${(free / 1048576).toFixed(1)} MiB free)`);
  }
}

/** checkPullUrl's refusal as a PullError. */
async function allowed(url: string): Promise<void> {
  try {
    await checkPullUrl(url);
  } catch (e) {
    throw new PullError((e as Error).message);
  }
}
