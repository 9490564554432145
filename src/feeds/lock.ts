/**
 * The refresh lock: a file beside the index naming the one process of the
 * host that fetches and builds. Its holder is a process id, that process's
 * start time and a random token (threads share a pid, and pids are reused),
 * and it stays held while its holder keeps touching the file (a heartbeat on
 * its mtime): a lock whose heartbeat lapsed is taken over, however long a
 * legitimate refresh runs. Processes without the lock pick up the file the
 * holder publishes.
 */
import { closeSync, fstatSync, futimesSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

/** How often the holder touches the lock. */
export const HEARTBEAT_MS = 10_000;
/** A lock not touched for this long is abandoned (its holder died or hung): several missed heartbeats. */
export const LOCK_LAPSE_MS = 6 * HEARTBEAT_MS;

/** Who holds the lock, as written in the file. */
export interface LockHolder {
  pid: number;
  /** The holder process's start (ms since the epoch; null where /proc does not say): with the pid, one process. */
  processStartedAt: number | null;
  /** Random per acquisition: tells two threads of one process (or a reused pid) apart. */
  token: string;
  /** When the lock was taken, ms. */
  since: number;
}

/** A held lock, as its holder sees it. */
export interface HeldLock {
  readonly holder: LockHolder;
  /** Touches the lock; false when it is no longer ours (taken over after a lapse, or removed). */
  heartbeat(): boolean;
  /** Removes the lock if it is still ours. */
  release(): void;
}

/** A lock file as another process reads it. */
export interface LockView {
  holder: LockHolder | null;
  /** Last heartbeat (the file's mtime), ms. */
  heartbeatAt: number;
  /** Whether the heartbeat is recent enough for the lock to count as held. */
  live: boolean;
}

let bootMs: number | null | undefined;
/** When this host booted, ms (from /proc/stat); null off Linux. */
function bootTime(): number | null {
  if (bootMs !== undefined) return bootMs;
  try {
    const m = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
    bootMs = m ? Number(m[1]) * 1000 : null;
  } catch {
    bootMs = null;
  }
  return bootMs;
}

/** When process `pid` started, ms (from /proc/<pid>/stat, field 22, in clock ticks after boot); null when unknown. */
export function processStartedAt(pid: number): number | null {
  const boot = bootTime();
  if (boot === null) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // USER_HZ is 100 on every Linux this runs on.
    return boot + Number(fields[19]) * 10;
  } catch {
    return null;
  }
}

/** Reads the lock at `path`; null when there is none. A lock with unreadable content (being written) counts by its mtime alone. */
export function readLock(path: string, now: number, lapseMs = LOCK_LAPSE_MS): LockView | null {
  let heartbeatAt: number;
  try {
    heartbeatAt = statSync(path).mtimeMs;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  let holder: LockHolder | null = null;
  try {
    const doc = JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
    if (typeof doc?.pid === 'number' && typeof doc.token === 'string' && typeof doc.since === 'number') holder = doc;
  } catch {
    // Empty or garbled: its creator may be writing it this instant.
  }
  return { holder, heartbeatAt, live: now - heartbeatAt < lapseMs };
}

/**
 * Takes the lock (an O_EXCL create), or takes over one whose heartbeat
 * lapsed; null while another holder's heartbeat is live. Throws on a file
 * system error (read-only, full, out of descriptors): the caller backs off.
 */
export function acquireLock(path: string, now = Date.now(), lapseMs = LOCK_LAPSE_MS): HeldLock | null {
  const holder: LockHolder = { pid: process.pid, processStartedAt: processStartedAt(process.pid), token: randomBytes(12).toString('hex'), since: now };
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o644);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const seen = readLock(path, now, lapseMs);
      if (seen === null) continue; // released this instant: try again
      if (seen.live) return null;
      // Abandoned: remove it unless someone else took it over since we read it (a new token).
      const again = readLock(path, now, lapseMs);
      if (again && (again.live || again.holder?.token !== seen.holder?.token)) return null;
      try {
        unlinkSync(path);
      } catch (e2) {
        if ((e2 as NodeJS.ErrnoException).code !== 'ENOENT') throw e2;
      }
      continue;
    }
    try {
      writeSync(fd, JSON.stringify(holder));
    } catch (e) {
      // A full disk: leave no empty lock behind for others to wait on.
      closeSync(fd);
      try {
        unlinkSync(path);
      } catch {}
      throw e;
    }
    return heldLock(path, fd, holder);
  }
  return null;
}

/** The holder's handle: the descriptor stays open, so a heartbeat touches our file even if the path was taken over. */
function heldLock(path: string, fd: number, holder: LockHolder): HeldLock {
  const ino = fstatSync(fd).ino;
  let open = true;
  const ours = (): boolean => {
    try {
      return statSync(path).ino === ino;
    } catch {
      return false;
    }
  };
  return {
    holder,
    heartbeat() {
      if (!open || !ours()) return false;
      const t = new Date();
      futimesSync(fd, t, t);
      return true;
    },
    release() {
      if (!open) return;
      open = false;
      try {
        if (ours()) unlinkSync(path);
      } catch {
        // Already gone, or the directory turned read-only: a lapsed lock is taken over later.
      }
      try {
        closeSync(fd);
      } catch {}
    },
  };
}
