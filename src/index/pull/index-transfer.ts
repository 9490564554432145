/**
 * Getting a new index's bytes into a temp file, the cheapest way the signed
 * manifest offers: a delta from the served version (applied by xdelta3 in a
 * child process), else the zstd-compressed copy (decompressed as it streams,
 * bounded by both declared sizes), else the plain file. Each result is handed
 * to the one verification (verifyIndexFile) before it counts; any failure
 * falls through to the next way, and every reason is kept for the status.
 */
import { closeSync, fsyncSync, openSync, rmSync } from 'node:fs';
import { BlockStream, WRITE_BLOCK, writeAt } from '../../file-io/atomic-file.ts';
import type { CompressedTransfer, DeltaTransfer, PublishedManifest } from '../publish/signed-manifest.ts';
import { boundedZstdDecompressor } from '../publish/index-compression.ts';
import { applyDelta, XDELTA3_MISSING } from '../publish/index-delta.ts';

import type { TransferMethod } from './pull-status-file.ts';
import { writeOrWait } from './write-or-wait.ts';

export type { TransferMethod };

/** Why a transfer failed; the message carries no fetched bytes. */
export class TransferError extends Error {
  /** What every attempt downloaded before the last failed (set when all have failed). */
  bytes?: Record<TransferMethod, number>;
  constructor(message: string) {
    super(message);
    this.name = 'TransferError';
  }
}

/** What a transfer needs of the puller. */
export interface TransferContext {
  /** A bounded GET (no redirects, a deadline, stopped by the puller's close); throws with the reason. */
  get(url: string): Promise<Response>;
  /** Whether the puller was stopped. */
  stopped(): boolean;
  signal: AbortSignal;
  /** The xdelta3 program, or null when it is not installed. */
  xdelta3: string | null;
  /** Longest a delta may take to apply. */
  applyTimeoutMs: number;
}

/** The new index wanted, and what this server holds. */
export interface TransferPlan {
  manifest: PublishedManifest;
  manifestUrl: string;
  /** The served, verified index (a delta's source), or null. */
  served: { path: string; sha256: string } | null;
  /** Where the result goes (a temp name beside the served file); `<tmp>.delta` holds a downloaded delta. */
  tmp: string;
}

/** How the index arrived, what every attempt downloaded, and why the cheaper ways were passed over. */
export interface TransferResult {
  method: TransferMethod;
  /** Bytes downloaded by every attempt of this pull, by method. */
  bytes: Record<TransferMethod, number>;
  /** One line per cheaper way not used (missing, failed, refused). */
  fallbacks: string[];
}

/** The first transfer that yields a file `verify` accepts at `plan.tmp`; throws TransferError naming every failure. */
export async function transferIndex(plan: TransferPlan, ctx: TransferContext, verify: (path: string) => void): Promise<TransferResult> {
  const bytes: Record<TransferMethod, number> = { delta: 0, compressed: 0, plain: 0 };
  const fallbacks: string[] = [];
  const count = (method: TransferMethod) => (n: number) => {
    bytes[method] += n;
  };
  const attempts: [TransferMethod, (() => Promise<void>) | string][] = [
    ['delta', deltaAttempt(plan, ctx, count('delta'))],
    ['compressed', plan.manifest.compressed ? () => downloadCompressed(plan, plan.manifest.compressed!, ctx, count('compressed')) : 'the manifest lists no compressed file'],
    ['plain', () => downloadPlain(new URL(plan.manifest.file, plan.manifestUrl).href, plan.tmp, plan.manifest.size, ctx, count('plain'))],
  ];
  for (const [method, attempt] of attempts) {
    if (typeof attempt === 'string') {
      fallbacks.push(`${method}: ${attempt}`);
      continue;
    }
    try {
      await attempt();
      verify(plan.tmp);
      return { method, bytes, fallbacks };
    } catch (e) {
      rmSync(plan.tmp, { force: true });
      if (ctx.stopped()) throw Object.assign(new TransferError('puller stopped'), { bytes });
      fallbacks.push(`${method}: ${(e as Error).message}`);
    }
  }
  // The plain file's own reason comes first: it is the one every puller has always had.
  const failure = new TransferError([fallbacks.pop()!.replace(/^plain: /, ''), ...fallbacks.map((f) => `(${f})`)].join(' '));
  failure.bytes = bytes;
  throw failure;
}

/** The delta attempt, or why there is none for this server. */
function deltaAttempt(plan: TransferPlan, ctx: TransferContext, counted: (n: number) => void): (() => Promise<void>) | string {
  const deltas = plan.manifest.deltas;
  if (!deltas || deltas.length === 0) return 'the manifest lists no deltas';
  if (!plan.served) return 'no verified index served to apply a delta to';
  const delta = deltas.find((d) => d.from_sha256 === plan.served!.sha256);
  if (!delta) return `no delta from the served version ${plan.served.sha256.slice(0, 12)}`;
  if (!ctx.xdelta3) return XDELTA3_MISSING;
  return () => downloadAndApplyDelta(plan, delta, plan.served!.path, ctx.xdelta3!, ctx, counted);
}

/** Downloads the delta (its declared size and sha256 checked), then applies it to the served file into `plan.tmp`. */
async function downloadAndApplyDelta(plan: TransferPlan, delta: DeltaTransfer, source: string, xdelta3: string, ctx: TransferContext, counted: (n: number) => void): Promise<void> {
  const deltaPath = `${plan.tmp}.delta`;
  try {
    await downloadPlain(new URL(delta.file, plan.manifestUrl).href, deltaPath, delta.size, ctx, counted, delta.sha256);
    await applyDelta(xdelta3, source, deltaPath, plan.tmp, { maxOutputBytes: plan.manifest.size, timeoutMs: ctx.applyTimeoutMs, signal: ctx.signal });
  } finally {
    rmSync(deltaPath, { force: true });
  }
}

/** GETs `url` and hands each body chunk to `each`, refusing a body past `maxBytes`; returns the sha256 of what came. */
export async function streamBody(url: string, what: string, maxBytes: number, ctx: TransferContext, counted: (n: number) => void, each: (chunk: Uint8Array) => void | Promise<void>): Promise<{ size: number; sha256: string }> {
  const res = await ctx.get(url);
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel();
    throw new TransferError(`${what} answered HTTP ${res.status}`);
  }
  const hasher = new Bun.CryptoHasher('sha256');
  let size = 0;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      if (ctx.stopped()) throw new TransferError('puller stopped');
      size += chunk.length;
      counted(chunk.length);
      if (size > maxBytes) throw new TransferError(`${what} larger than its manifest's ${maxBytes} bytes`);
      hasher.update(chunk);
      await each(chunk);
    }
  } catch (e) {
    await res.body.cancel().catch(() => undefined);
    if (e instanceof TransferError) throw e;
    throw new TransferError(`${what} download failed: ${ctx.stopped() ? 'puller stopped' : (e as Error).name === 'TimeoutError' ? 'timed out' : (e as Error).message.slice(0, 200)}`);
  }
  if (size !== maxBytes) throw new TransferError(`${what} truncated: ${size} of ${maxBytes} bytes`);
  return { size, sha256: hasher.digest('hex') };
}

/**
 * Writes every chunk to a new file at `path` in aligned WRITE_BLOCK blocks
 * (as the builder does: the page cache then holds the index in 2 MiB folios,
 * which the server maps with 2 MiB entries; written as the body's 16-64 KiB
 * chunks came, the served file stayed in 4 KiB pages), fsynced when done.
 */
export function fileSink(path: string): { write(chunk: Uint8Array): void; close(ok: boolean): void } {
  const fd = openSync(path, 'wx', 0o644);
  const blocks = new BlockStream((bytes, index) => writeAt(fd, bytes, index * WRITE_BLOCK));
  return {
    write(chunk) {
      blocks.write(chunk);
    },
    close(ok) {
      try {
        if (ok) {
          blocks.end();
          fsyncSync(fd);
        }
      } finally {
        closeSync(fd);
      }
    },
  };
}

/** Streams `url` to `path`; refuses a size other than `size` and, when given, a sha256 other than `sha256` (verifyIndexFile checks an index). */
export async function downloadPlain(url: string, path: string, size: number, ctx: TransferContext, counted: (n: number) => void, sha256?: string, what = sha256 ? 'delta' : 'index'): Promise<void> {
  const sink = fileSink(path);
  let ok = false;
  try {
    const got = await streamBody(url, what, size, ctx, counted, (chunk) => sink.write(chunk));
    if (sha256 && got.sha256 !== sha256) throw new TransferError(`${what} sha256 differs from its signed manifest`);
    ok = true;
  } finally {
    sink.close(ok);
  }
}

/**
 * Streams the compressed file through a zstd decompressor (window bounded) into `plan.tmp`: refused as soon as the
 * compressed bytes pass their declared size or the output passes the index's (a zstd bomb is never written past it),
 * and when the compressed bytes' sha256 differs from the signed one.
 */
async function downloadCompressed(plan: TransferPlan, compressed: CompressedTransfer, ctx: TransferContext, counted: (n: number) => void): Promise<void> {
  const limit = plan.manifest.size;
  const sink = fileSink(plan.tmp);
  const zstd = boundedZstdDecompressor();
  zstd.on('error', () => {}); // its errors reach the reading loop below
  let written = 0;
  const failed: { error: TransferError | null } = { error: null };
  const drained = (async () => {
    for await (const out of zstd as AsyncIterable<Buffer>) {
      written += out.length;
      if (written > limit) throw new TransferError(`compressed file expands past the index's declared ${limit} bytes`);
      sink.write(out);
    }
  })().catch((e: Error) => {
    failed.error = e instanceof TransferError ? e : new TransferError(`compressed file does not decompress: ${e.message.slice(0, 200)}`);
    zstd.destroy();
  });
  let ok = false;
  try {
    const got = await streamBody(new URL(compressed.file, plan.manifestUrl).href, 'compressed file', compressed.size, ctx, counted, async (chunk) => {
      if (failed.error) throw failed.error;
      await writeOrWait(zstd, chunk);
      if (failed.error) throw failed.error;
    });
    if (got.sha256 !== compressed.sha256) throw new TransferError('compressed file sha256 differs from its signed manifest');
    zstd.end();
    await drained;
    if (failed.error) throw failed.error;
    if (written !== limit) throw new TransferError(`compressed file expands to ${written} bytes; the index is ${limit}`);
    ok = true;
  } finally {
    if (!ok) zstd.destroy();
    await drained;
    sink.close(ok);
  }
}
