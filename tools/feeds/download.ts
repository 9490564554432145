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
}

export interface Downloaded {
  bytes: number;
  sha256: string;
}

/** Identifies the updater to publishers (several ask for a descriptive agent). */
const USER_AGENT = 'ipintel-feeds-updater/1 (+self-hosted IP intelligence)';

/** GETs `url` into `dest` (created or truncated); removes `dest` and throws DownloadError on any failure. */
export async function downloadToFile(url: string, dest: string, limits: DownloadLimits): Promise<Downloaded> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  const file = await open(dest, 'w', 0o644);
  let ok = false;
  try {
    let res: Response;
    try {
      // A .gz feed is stored as served: undoing a Content-Encoding on it would leave plain text under a .gz name.
      const init = { signal, redirect: 'follow', headers: { 'user-agent': USER_AGENT }, decompress: !dest.endsWith('.gz') };
      res = await fetch(url, init as RequestInit);
    } catch (e) {
      throw new DownloadError(describeFetchError(e, limits.timeoutMs));
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
    return { bytes, sha256: hasher.digest('hex') };
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
