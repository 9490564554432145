/**
 * libc through bun:ffi, for the few calls Bun has no API for: a read-only
 * mmap (src/index/map-read-only.ts) and the descriptor limit
 * (descriptor-limit.ts).
 */
import { dlopen, suffix, type FFIFunction } from 'bun:ffi';

/** glibc first (Debian runtime image), then musl, then the platform's plain name. */
const LIBC_NAMES = ['libc.so.6', 'libc.musl-x86_64.so.1', 'libc.musl-aarch64.so.1', `libc.${suffix}`];

/** libc's `symbols`, or null where no libc of these names loads. */
export function openLibc<const T extends Record<string, FFIFunction>>(symbols: T): ReturnType<typeof dlopen<T>>['symbols'] | null {
  for (const name of LIBC_NAMES) {
    try {
      return dlopen(name, symbols).symbols;
    } catch {
      // try the next name
    }
  }
  return null;
}
