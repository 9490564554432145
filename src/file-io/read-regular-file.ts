/**
 * Reading a file an operator names, which anyone who can write its folder
 * may have replaced: only a regular file is read, checked on the opened
 * descriptor (a FIFO, a device or a socket named there is opened without
 * blocking and refused, never read), and never more than a bound (the size
 * is checked on the descriptor, and the read stops one byte past the bound
 * when the file grows meanwhile).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Why a file was not read (the caller names the file). */
export class UnreadableFileError extends Error {}

/** The bytes of the regular file at `path`; throws UnreadableFileError when it is no regular file or larger than `maxBytes`. */
export function readRegularFile(path: string, maxBytes: number): Uint8Array {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UnreadableFileError(`is not a regular file (${kindOf(st)}): only a regular file is read`);
    if (st.size > maxBytes) throw new UnreadableFileError(`is ${st.size} bytes, over the limit of ${maxBytes}`);
    // One byte past the size: a file that grew since the fstat is noticed, and read on within the bound.
    let out = new Uint8Array(st.size + 1);
    let at = 0;
    for (;;) {
      const n = readSync(fd, out, at, out.length - at, null);
      if (n === 0) return out.subarray(0, at);
      at += n;
      if (at > maxBytes) throw new UnreadableFileError(`grew past the limit of ${maxBytes} bytes while it was read`);
      if (at === out.length) {
        const more = new Uint8Array(Math.min(maxBytes + 1, out.length * 2));
        more.set(out);
        out = more;
      }
    }
  } finally {
    closeSync(fd);
  }
}

function kindOf(st: { isDirectory(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean }): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isDirectory()) return 'a folder';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}
