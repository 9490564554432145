/**
 * Pulling a published index (IPINTEL_INDEX_URL): a conditional GET of the
 * signed manifest every poll; the index itself is downloaded only when the
 * manifest names a file other than the one served, then checked (size,
 * sha256, signature, the index's own checks, not older than what is served)
 * before an atomic rename and the swap. Every failure keeps the served index
 * and is reported; polls back off while they fail.
 */
import type { KeyObject } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { FORMAT_VERSION } from '../format.ts';
import { mapIndexFile } from '../index-file.ts';
import { MAX_MANIFEST_BYTES, ManifestRefusal, verifyManifest, type PublishedManifest } from '../publish/signed-manifest.ts';
import { writeTextAtomically } from '../atomic-text.ts';
import { readCappedBytes } from '../../net/read-capped.ts';
import { writePullStatus, type PollOutcome, type PullStatus } from './pull-status-file.ts';

export type { PollOutcome, PullStatus };
import { checkPullUrl } from './pull-url.ts';

export interface PullerOptions {
  /** URL of the published index; the manifest is this plus `.json`. */
  indexUrl: string;
  publicKey: KeyObject;
  /** The local file the pulled index is placed at (the server's IPINTEL_INDEX). */
  localPath: string;
  pollMs: number;
  /** Swaps the placed file in (every worker); a throw counts as a failed poll. */
  swap: (path: string) => Promise<void>;
  log?: (line: string) => void;
  now?: () => number;
  /** Keep the status in a file beside the pulled index, for every worker's status and metrics. */
  writeStatus?: boolean;
  /** Bounds of one transfer. */
  manifestTimeoutMs?: number;
  indexTimeoutMs?: number;
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

/** Polls a published index and swaps in each new verified version. */
export class IndexPuller {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<PollOutcome> | null = null;
  private validators: { etag: string | null; lastModified: string | null } = { etag: null, lastModified: null };
  private served: PublishedManifest | null = null;
  private closed = false;
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
      next_check: null,
      consecutive_failures: 0,
      polls: { updated: 0, not_modified: 0, unchanged: 0, failed: 0 },
    };
  }

  /** Starts polling now and every poll interval after; never throws. */
  start(): void {
    this.served = readSidecar(this.options.localPath, this.options.publicKey);
    if (this.served) {
      this.status.sha256 = this.served.sha256;
      this.status.built_at = this.served.built_at;
    }
    this.schedule(0);
  }

  /** Stops polling (a transfer in flight is abandoned at its next step). */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** One poll (or the one in flight); resolves with its outcome, never rejects. */
  poll(): Promise<PollOutcome> {
    this.running ??= this.pollOnce()
      .then((outcome) => {
        this.status.polls[outcome]++;
        return outcome;
      })
      .finally(() => {
        this.running = null;
        if (this.options.writeStatus) writePullStatus(this.options.localPath, this.status);
      });
    return this.running;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.status.next_check = new Date(this.now() + delayMs).toISOString();
    if (this.options.writeStatus) writePullStatus(this.options.localPath, this.status);
    this.timer = setTimeout(async () => {
      this.timer = null;
      await this.poll();
      this.schedule(this.nextDelay());
    }, delayMs);
    this.timer.unref?.();
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

  private async check(): Promise<PollOutcome> {
    const manifestUrl = `${this.options.indexUrl}.json`;
    await allowed(manifestUrl);
    const headers: Record<string, string> = {};
    if (this.validators.etag) headers['if-none-match'] = this.validators.etag;
    if (this.validators.lastModified) headers['if-modified-since'] = this.validators.lastModified;
    const res = await fetchBounded(manifestUrl, headers, this.options.manifestTimeoutMs ?? 30_000);
    if (res.status === 304 && this.served) return 'not_modified';
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new PullError(`manifest answered HTTP ${res.status}`);
    }
    const body = await readCappedBytes(res, MAX_MANIFEST_BYTES);
    if (body === null) throw new PullError(`manifest larger than ${MAX_MANIFEST_BYTES} bytes`);
    const text = new TextDecoder().decode(body);
    const manifest = verifyManifest(text, this.options.publicKey);
    const validators = { etag: res.headers.get('etag'), lastModified: res.headers.get('last-modified') };
    if (manifest.format_version !== FORMAT_VERSION) {
      throw new PullError(`manifest is for index format ${manifest.format_version}; this server reads ${FORMAT_VERSION}`);
    }
    if (this.served?.sha256 === manifest.sha256) {
      this.validators = validators;
      return 'unchanged';
    }
    // Only a pulled index counts: a fallback default built here is replaced by any verified publish.
    if (this.served && Date.parse(manifest.built_at) < Date.parse(this.served.built_at)) {
      throw new PullError(`manifest built ${manifest.built_at} is older than the served index (rollback refused)`);
    }
    const fileUrl = new URL(manifest.file, manifestUrl).href;
    await allowed(fileUrl);
    const tmp = join(dirname(this.options.localPath), `.${basename(this.options.localPath)}.pull-${process.pid}-${this.now()}`);
    try {
      await this.download(fileUrl, tmp, manifest);
      const index = mapIndexFile(tmp); // magic, version, header and every section's checksum
      if (new Date(index.builtAtMs).toISOString() !== new Date(manifest.built_at).toISOString()) {
        throw new PullError('the index header names another build time than its manifest');
      }
      renameSync(tmp, this.options.localPath);
      writeSidecar(this.options.localPath, manifest);
    } catch (e) {
      rmSync(tmp, { force: true });
      if (e instanceof PullError) throw e;
      throw new PullError(`downloaded index refused: ${(e as Error).message}`);
    }
    await this.options.swap(this.options.localPath);
    this.served = manifest;
    this.validators = validators;
    this.status.sha256 = manifest.sha256;
    this.status.built_at = manifest.built_at;
    this.status.last_change = new Date(this.now()).toISOString();
    this.log(`index pull: swapped in ${manifest.file} (built ${manifest.built_at}, ${(manifest.size / 1048576).toFixed(1)} MiB)`);
    return 'updated';
  }

  /** Streams the index to `tmp`, hashing as it goes; refuses a size or hash other than the manifest's. */
  private async download(url: string, tmp: string, manifest: PublishedManifest): Promise<void> {
    const res = await fetchBounded(url, {}, this.options.indexTimeoutMs ?? 30 * 60_000);
    if (res.status !== 200 || !res.body) {
      await res.body?.cancel();
      throw new PullError(`index answered HTTP ${res.status}`);
    }
    const hasher = new Bun.CryptoHasher('sha256');
    const fd = openSync(tmp, 'wx', 0o644);
    let size = 0;
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        if (this.closed) throw new PullError('puller closed');
        size += chunk.length;
        if (size > manifest.size) throw new PullError(`index larger than its manifest's ${manifest.size} bytes`);
        hasher.update(chunk);
        let off = 0;
        while (off < chunk.length) off += writeSync(fd, chunk, off, chunk.length - off);
      }
      if (size !== manifest.size) throw new PullError(`index truncated: ${size} of ${manifest.size} bytes`);
      if (hasher.digest('hex') !== manifest.sha256) throw new PullError('index sha256 differs from its signed manifest');
      fsyncSync(fd);
    } catch (e) {
      if (e instanceof PullError) throw e;
      throw new PullError(`index download failed: ${(e as Error).name === 'TimeoutError' ? 'timed out' : 'connection error'}`);
    } finally {
      closeSync(fd);
    }
  }
}

/** Where the manifest of the pulled file is kept, so a restarted server knows what it serves without hashing it. */
function sidecarPath(localPath: string): string {
  return `${localPath}.pulled.json`;
}

/** Writes the served manifest beside the pulled file (atomically). */
function writeSidecar(localPath: string, manifest: PublishedManifest): void {
  writeTextAtomically(sidecarPath(localPath), JSON.stringify(manifest));
}

/** The manifest of the file at `localPath` when its sidecar verifies and matches the file's size and build time; else null (the next poll downloads). */
function readSidecar(localPath: string, publicKey: KeyObject): PublishedManifest | null {
  try {
    const manifest = verifyManifest(readFileSync(sidecarPath(localPath), 'utf8'), publicKey);
    const { size } = statSync(localPath);
    const index = mapIndexFile(localPath, { verifyChecksums: false });
    if (size !== manifest.size || new Date(index.builtAtMs).toISOString() !== new Date(manifest.built_at).toISOString()) return null;
    return manifest;
  } catch {
    return null;
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

/** GET without following redirects (a redirect is refused: the URL is the operator's), within a deadline. */
async function fetchBounded(url: string, headers: Record<string, string>, timeoutMs: number): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { headers, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    throw new PullError(`${new URL(url).host} unreachable (${(e as Error).name === 'TimeoutError' ? 'timed out' : 'connection error'})`);
  }
  if (res.status >= 300 && res.status < 400 && res.status !== 304) {
    await res.body?.cancel();
    throw new PullError(`HTTP ${res.status} redirect refused (point IPINTEL_INDEX_URL at the final address)`);
  }
  return res;
}
