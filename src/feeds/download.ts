/**
 * Downloading one feed to a temp file: bounded in time and size, written
 * with fsync so a later rename publishes complete bytes only. Redirects are
 * followed by hand under the redirect policy (redirect-policy.ts). A failure
 * reason is a category and numbers only: nothing the publisher sent (status
 * text, headers, body, a redirect's target) reaches the log or the state file.
 */
import { open, unlink } from 'node:fs/promises';
import { addressVerdict, MAX_REDIRECTS, redirectScope, redirectVerdict, type RedirectScope } from './redirect-policy.ts';

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
  /** Hosts besides the URL's own a redirect may lead to (the catalog entry's `allowHosts`). */
  allowHosts?: readonly string[];
  /** Called after each chunk is written, with the bytes so far and the declared length (NaN when none). */
  onProgress?: (bytes: number, declared: number) => void;
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
      // A .gz (or .tgz) file is stored as served: undoing a Content-Encoding on it would leave other bytes under its name.
      const headers: Record<string, string> = { 'user-agent': USER_AGENT };
      if (validators?.etag) headers['if-none-match'] = validators.etag;
      if (validators?.lastModified) headers['if-modified-since'] = validators.lastModified;
      res = await fetchFollowing(url, { signal, headers, decompress: !/\.t?gz$/.test(dest) }, redirectScope(url, limits.allowHosts));
    } catch (e) {
      if (e instanceof DownloadError) throw e;
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
      // The number only: the status text is the publisher's.
      throw new DownloadError(`HTTP ${res.status}`);
    }
    const declared = Number(res.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > limits.maxBytes) {
      await res.body?.cancel();
      throw new DownloadError(`larger than ${limits.maxBytes} bytes (declared)`);
    }
    const hasher = new Bun.CryptoHasher('sha256');
    let bytes = 0;
    try {
      for await (const chunk of res.body ?? []) {
        bytes += chunk.byteLength;
        if (bytes > limits.maxBytes) throw new DownloadError(`larger than ${limits.maxBytes} bytes`);
        hasher.update(chunk);
        await file.write(chunk);
        limits.onProgress?.(bytes, declared);
      }
    } catch (e) {
      if (e instanceof DownloadError) {
        await res.body?.cancel().catch(() => {});
        throw e;
      }
      // This host's disk, not the network: the reason names the file (a full disk, a read-only folder).
      const code = (e as NodeJS.ErrnoException)?.code;
      if (typeof code === 'string' && /^E(NOSPC|DQUOT|ROFS|ACCES|PERM|IO|MFILE|NFILE)$/.test(code)) {
        await res.body?.cancel().catch(() => {});
        throw new DownloadError(`cannot write ${dest}: ${code}`);
      }
      throw new DownloadError(describeFetchError(e, limits.timeoutMs));
    }
    await file.sync();
    ok = true;
    return { notModified: false, bytes, sha256: hasher.digest('hex'), etag: headerValue(res, 'etag'), lastModified: headerValue(res, 'last-modified') };
  } finally {
    await file.close();
    if (!ok) await unlink(dest).catch(() => {});
  }
}

/** Longest validator kept (it is sent back to the publisher and stored in the state file). */
const MAX_VALIDATOR_CHARS = 200;

/** A validator header, or null when absent or not a plain short token. */
function headerValue(res: Response, name: string): string | null {
  const v = res.headers.get(name);
  return v !== null && v.length <= MAX_VALIDATOR_CHARS && /^[\x20-\x7e]*$/.test(v) ? v : null;
}

type FetchInit = { signal: AbortSignal; headers: Record<string, string>; decompress: boolean };

/** GETs `url`, following at most MAX_REDIRECTS redirects that the policy allows; throws DownloadError naming the category of a refused one. */
async function fetchFollowing(url: string, init: FetchInit, scope: RedirectScope): Promise<Response> {
  let current = new URL(url);
  for (let hop = 0; ; hop++) {
    const res = await fetch(current, { ...init, redirect: 'manual' } as RequestInit);
    if (![301, 302, 303, 307, 308].includes(res.status)) return res;
    await res.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new DownloadError(`redirect refused: more than ${MAX_REDIRECTS} redirects`);
    const location = res.headers.get('location');
    let next: URL;
    try {
      if (!location) throw new Error('no location');
      next = new URL(location, current);
    } catch {
      throw new DownloadError('redirect refused: no usable location');
    }
    const verdict = redirectVerdict(current, next, scope);
    if ('refused' in verdict) throw new DownloadError(verdict.refused);
    if (verdict.follow === 'after-address-check') {
      const refused = await addressVerdict(next.hostname);
      if (refused) throw new DownloadError(refused);
    }
    current = next;
  }
}

/** A short reason for a network-level failure: a fixed category (an error's own message may quote what was received). */
function describeFetchError(e: unknown, timeoutMs: number): string {
  const err = e as Error & { code?: string };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return `timed out after ${Math.round(timeoutMs / 1000)} s`;
  const code = typeof err?.code === 'string' ? err.code : '';
  if (/ConnectionRefused|ECONNREFUSED/i.test(code)) return 'download failed: connection refused';
  if (/ENOTFOUND|EAI_|DNS|FailedToOpenSocket|Unable to connect/i.test(code)) return 'download failed: host unreachable or unknown';
  if (/CERT|TLS|SSL/i.test(code)) return 'download failed: TLS error';
  if (/ECONNRESET|ConnectionClosed|EPIPE/i.test(code)) return 'download failed: connection closed early';
  return 'download failed: network error';
}

/** SHA-256 of a file on disk, streamed. */
export async function sha256OfFile(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256');
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk);
  return hasher.digest('hex');
}
