/**
 * Mapping a file read-only (open O_RDONLY, mmap PROT_READ/MAP_SHARED) through
 * libc, for an index on a read-only volume: Bun.mmap always opens the file
 * read-write, so it fails with EROFS on a read-only mount and EACCES on a
 * file the server may read but not write.
 */
import { FFIType, read, toArrayBuffer, type Pointer } from 'bun:ffi';
import { openLibc } from '../net/libc.ts';

const O_RDONLY = 0;
const PROT_READ = 1;
const MAP_SHARED = 1;
const MAP_FAILED = 0xffff_ffff_ffff_ffffn;

const SYMBOLS = {
  open: { args: [FFIType.cstring, FFIType.i32], returns: FFIType.i32 },
  close: { args: [FFIType.i32], returns: FFIType.i32 },
  mmap: { args: [FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.i32, FFIType.i32, FFIType.i64], returns: FFIType.u64 },
  munmap: { args: [FFIType.u64, FFIType.u64], returns: FFIType.i32 },
  __errno_location: { args: [], returns: FFIType.ptr },
} as const;

type Libc = NonNullable<ReturnType<typeof openLibc<typeof SYMBOLS>>>;

let libc: Libc | null = null;

/** libc's symbols, loaded on first use. */
function loadLibc(): Libc {
  libc ??= openLibc(SYMBOLS);
  if (!libc) throw new Error('read-only mapping needs libc, and none could be loaded');
  return libc;
}

/** The calling thread's errno (0 where the platform does not say). */
function lastErrno(c: Libc): number {
  try {
    const at = c.__errno_location();
    return at ? read.i32(at as Pointer, 0) : 0;
  } catch {
    return 0;
  }
}

// The mapping lives as long as its ArrayBuffer: every view of the index holds that buffer.
const unmapOnCollect = new FinalizationRegistry<{ address: bigint; length: number }>(({ address, length }) => {
  libc?.munmap(address, BigInt(length));
});

/** Maps `length` bytes of `path` read-only; throws an Error naming errno when the file cannot be opened or mapped. */
export function mapFileReadOnly(path: string, length: number): Uint8Array {
  if (length === 0) return new Uint8Array(0);
  const c = loadLibc();
  const fd = c.open(Buffer.from(`${path}\0`), O_RDONLY);
  if (fd < 0) throw new Error(`open read-only failed (errno ${lastErrno(c)})`);
  let address: bigint;
  try {
    address = c.mmap(null, BigInt(length), PROT_READ, MAP_SHARED, fd, 0n) as bigint;
    if (address === MAP_FAILED || address === 0n) throw new Error(`mmap failed (errno ${lastErrno(c)})`);
  } finally {
    c.close(fd); // the mapping keeps its own reference to the file
  }
  const buffer = toArrayBuffer(Number(address) as Pointer, 0, length);
  unmapOnCollect.register(buffer, { address, length });
  return new Uint8Array(buffer);
}
