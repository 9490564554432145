/**
 * The process's open-descriptor limit (RLIMIT_NOFILE). Every connection,
 * DNS socket and upstream call holds a descriptor, and the soft limit a
 * shell or container starts us with (often 1024) is far below the hard
 * limit the operator allows. Bun has no setrlimit, so libc's getrlimit and
 * setrlimit are called through bun:ffi (in-process, no re-exec). Linux
 * only; elsewhere the limit is left as it is and said so.
 */
import { FFIType, ptr } from 'bun:ffi';
import { openLibc } from './libc.ts';
import { readdirSync, readFileSync } from 'node:fs';

/** RLIMIT_NOFILE on Linux (x86-64 and arm64 alike). */
const RLIMIT_NOFILE = 7;
const RLIM_INFINITY = 0xffff_ffff_ffff_ffffn;

export interface DescriptorLimit {
  /** The soft limit now in force (what EMFILE is measured against). */
  soft: number;
  hard: number;
  /** The soft limit before this call. */
  before: number;
  /** Why the limit could not be read or raised; null when it was. */
  problem: string | null;
}

type Rlimit = { getrlimit(resource: number, out: number): number; setrlimit(resource: number, value: number): number };

let libc: Rlimit | null | undefined;
/** getrlimit and setrlimit, loaded on first use (null off Linux or without a libc). */
function rlimitCalls(): Rlimit | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (process.platform !== 'linux') return libc;
  libc = openLibc({
    getrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    setrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
  }) as unknown as Rlimit | null;
  return libc;
}

/** The kernel's ceiling for any descriptor limit (fs.nr_open); an infinite hard limit is raised to this. */
function kernelCeiling(): bigint {
  try {
    return BigInt(readFileSync('/proc/sys/fs/nr_open', 'utf8').trim());
  } catch {
    return 1_048_576n;
  }
}

/** The soft limit from /proc (when libc cannot be called), or null. */
function procSoftLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+)\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

const toNumber = (v: bigint) => (v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(v));

/** The limit in force, without changing it. */
export function currentDescriptorLimit(): DescriptorLimit {
  const lib = rlimitCalls();
  const cells = new BigUint64Array(2);
  if (lib && lib.getrlimit(RLIMIT_NOFILE, ptr(cells)) === 0) {
    return { soft: toNumber(cells[0]!), hard: toNumber(cells[1]!), before: toNumber(cells[0]!), problem: null };
  }
  const soft = procSoftLimit() ?? 1024;
  return { soft, hard: soft, before: soft, problem: 'getrlimit unavailable (not Linux, or no libc found)' };
}

/** Raises the soft limit to the hard one (capped at the kernel's nr_open) and reports both. */
export function raiseDescriptorLimit(): DescriptorLimit {
  const lib = rlimitCalls();
  const current = currentDescriptorLimit();
  if (!lib || current.problem) return current;
  const cells = new BigUint64Array(2);
  lib.getrlimit(RLIMIT_NOFILE, ptr(cells));
  const hard = cells[1]!;
  const target = hard === RLIM_INFINITY ? kernelCeiling() : hard;
  if (cells[0]! >= target) return current;
  cells[0] = target;
  if (lib.setrlimit(RLIMIT_NOFILE, ptr(cells)) !== 0) return { ...current, problem: `setrlimit refused ${target} (hard ${hard})` };
  const after = currentDescriptorLimit();
  return { ...after, before: current.soft };
}

/** A one-line account of the limit for the start-up log. */
export function describeDescriptorLimit(limit: DescriptorLimit): string {
  if (limit.problem) return `descriptors: soft limit ${limit.soft} kept (${limit.problem})`;
  if (limit.before === limit.soft) return `descriptors: soft limit ${limit.soft} (already the hard limit ${limit.hard})`;
  return `descriptors: soft limit raised from ${limit.before} to ${limit.soft} (hard limit ${limit.hard})`;
}

/** Descriptors this process holds open now (all threads), or null where /proc is not there. */
export function openDescriptorCount(): number | null {
  try {
    // The listing itself holds one descriptor while it runs.
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return null;
  }
}
