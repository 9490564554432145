/**
 * The build process's own peak resident memory. `resourceUsage().maxRSS` is
 * not it on Linux: a process that Bun spawns (vfork semantics) starts with
 * its parent's peak, so a build started by a large parent would report the
 * parent's. The kernel's high-water mark of this process's own memory
 * (`VmHWM` in /proc/self/status, reset by exec) is; elsewhere maxRSS stands in.
 */
import { readFileSync } from 'node:fs';

/** Peak resident memory of this process since it started, in bytes. */
export function peakRssBytes(): number {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // Not Linux: no /proc.
  }
  // KiB on Linux and macOS.
  return process.resourceUsage().maxRSS * 1024;
}
