/**
 * The zstd-compressed copy of a published index: one standard zstd frame
 * (`zstd -d` reads it back), written by Bun's own zstd (node:zlib) as a
 * stream, so it needs no program installed and little memory. Its window is
 * small, so a puller decompresses it with a small, fixed window limit.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { constants, createZstdCompress, createZstdDecompress, type ZstdDecompress } from 'node:zlib';

/** zstd level of the published copy: fast, and most of the ratio of higher levels on an index (BENCHMARKS.md). */
const ZSTD_LEVEL = 3;

/** The largest window (log2) a puller accepts: the publisher's level 3 uses 2^21; a frame asking for more is refused unread. */
export const ZSTD_WINDOW_LOG_MAX = 24;

/** Writes `from` compressed to `to` (the caller places it atomically). */
export async function compressIndexFile(from: string, to: string): Promise<void> {
  const zstd = createZstdCompress({ params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL, [constants.ZSTD_c_checksumFlag]: 1, [constants.ZSTD_c_windowLog]: 21 } });
  await pipeline(createReadStream(from), zstd, createWriteStream(to, { flags: 'wx', mode: 0o644 }));
}

/** A zstd decompressor whose window, and so memory, is bounded by ZSTD_WINDOW_LOG_MAX. */
export function boundedZstdDecompressor(): ZstdDecompress {
  return createZstdDecompress({ params: { [constants.ZSTD_d_windowLogMax]: ZSTD_WINDOW_LOG_MAX } });
}
