/**
 * Downloading one feed to a temp file: bounded in time and size, written
 * with fsync so a later rename publishes complete bytes only.
 */
import { open, unlink } from 'node:fs/promises';

/** Why a download failed (HTTP status, timeout, size, network). */
export class DownloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DownloadError';
  }
}

export interface DownloadLimits {
  /** Whole-transfer deadline in milliseconds. */
  timeoutMs: number;
  /** Larger bodies are refused (a wrong URL must not fill the disk). */
  maxBytes: number;
  /** Deadline for the response headers (an unreachable host fails fast); default the whole deadline. */
  connectTimeoutMs?: number;
}

/** What the publisher said identifies its copy, sent back as If-None-Match / If-Modified-Since. */
export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

export interface Downloaded extends Validators {
  notModified: false;
  bytes: number;
  sha256: string;
}

/** The publisher answered 304: the copy on disk is current; nothing was written. */
export interface NotModified {
  notModified: true;
}

/** Identifies the updater to publishers (several ask for a descriptive agent). */
const USER_AGENT = 'ipintel-feeds-updater/1 (+self-hosted IP intelligence)';

/**
 * GETs `url` into `dest` (created or truncated); removes `dest` and throws
 * DownloadError on any failure. With `validators` the request is conditional
 * and a 304 resolves NotModified (and leaves no file).
 */
export async function downloadToFile(url: string, dest: string, limits: DownloadLimits, validators?: Validators): Promise<Downloaded | NotModified> {
  const headersDeadline = new AbortController();
  const signal = AbortSignal.any([AbortSignal.timeout(limits.timeoutMs), headersDeadline.signal]);
  const connectMs = limits.connectTimeoutMs ?? limits.timeoutMs;
  const headersTimer = setTimeout(() => headersDeadline.abort(new DOMException('no answer', 'TimeoutError')), connectMs);
  const file = await open(dest, 'w', 0o644);
  let ok = false;
  try {
    let res: Response;
    try {
      // A .gz feed is stored as served: undoing a Content-Encoding on it would leave plain text under a .gz name.
      const headers: Record<string, string> = { 'user-agent': USER_AGENT };
      if (validators?.etag) headers['if-none-match'] = validators.etag;
      if (validators?.lastModified) headers['if-modified-since'] = validators.lastModified;
      const init = { signal, redirect: 'follow', headers, decompress: !dest.endsWith('.gz') };
      res = await fetch(url, init as RequestInit);
    } catch (e) {
      throw new DownloadError(describeFetchError(e, headersDeadline.signal.aborted ? connectMs : limits.timeoutMs));
    } finally {
      clearTimeout(headersTimer);
    }
    if (res.status === 304 && validators) {
      await res.body?.cancel();
      return { notModified: true };
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new DownloadError(`HTTP ${res.status} ${res.statusText}`.trim());
    }
    const hasher = new Bun.CryptoHasher('sha256');
    let bytes = 0;
    try {
      for await (const chunk of res.body ?? []) {
        bytes += chunk.byteLength;
        if (bytes > limits.maxBytes) throw new DownloadError(`larger than ${limits.maxBytes} bytes`);
        hasher.update(chunk);
        await file.write(chunk);
      }
    } catch (e) {
      if (e instanceof DownloadError) throw e;
      throw new DownloadError(describeFetchError(e, limits.timeoutMs));
    }
    await file.sync();
    ok = true;
    return { notModified: false, bytes, sha256: hasher.digest('hex'), etag: res.headers.get('etag'), lastModified: res.headers.get('last-modified') };
  } finally {
    await file.close();
    if (!ok) await unlink(dest).catch(() => {});
  }
}

/** A short reason for a network-level failure. */
function describeFetchError(e: unknown, timeoutMs: number): string {
  const err = e as Error;
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return `timed out after ${Math.round(timeoutMs / 1000)} s`;
  return `download failed: ${err?.message ?? String(e)}`;
}

/** SHA-256 of a file on disk, streamed. */
export async function sha256OfFile(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256');
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk);
  return hasher.digest('hex');
}
