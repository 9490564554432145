/** The sha256 of a file, read in blocks (an index is hundreds of MB). */
import { closeSync, openSync, readSync } from 'node:fs';

/** sha256 of a file as lower-case hex, read in 4 MiB blocks. */
export function sha256OfFile(path: string): string {
  const hasher = new Bun.CryptoHasher('sha256');
  const fd = openSync(path, 'r');
  try {
    const block = Buffer.allocUnsafe(4 * 1024 * 1024);
    for (;;) {
      const n = readSync(fd, block, 0, block.length, null);
      if (n === 0) break;
      hasher.update(block.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hasher.digest('hex');
}
