/**
 * The cap on open connections (IPINTEL_MAX_CONNECTIONS). Bun.serve has no
 * hook for a connection's opening or closing, so the gate works from what it
 * can see:
 *  - which connections are known: a client address and port seen on a
 *    request (kept in activity order, at most `max`, forgotten once quiet
 *    longer than the server's idle timeout, when Bun has closed them);
 *  - how many are open: the descriptors the process holds (all its worker
 *    threads), less those it held at start, sampled at most every
 *    SAMPLE_MS and only when a new connection asks.
 * A request on a known connection is always served. A request on a new one
 * is served while the open count is below `max`; beyond it the answer is
 * 503 with `Connection: close`, so its descriptor is given back at once
 * while the connections already open keep being served. Connections are
 * told apart only from half the cap up (reading a request's peer costs on
 * every request); below that the gate is a counter and a periodic count.
 */

/** How stale the descriptor count may be when deciding on a new connection; near the cap, NEAR_SAMPLE_MS. */
const SAMPLE_MS = 100;
const NEAR_SAMPLE_MS = 25;

/** Cells of the count the workers of a host share: the open-connection estimate, and the descriptors held before any connection (0: not measured yet). */
const ESTIMATE = 0;
const BASELINE = 1;

/** Memory for the count shared by the workers of a host (share the buffer through postMessage). */
export function allocateConnectionCount(): SharedArrayBuffer {
  return new SharedArrayBuffer(2 * 4);
}

/**
 * Fixes the host's descriptor baseline before any connection (a pool, once its workers listen): the first
 * request's sample would otherwise take as baseline whatever the primary holds at that moment, such as the
 * files of the code it loads once the workers serve, and count that many connections too few while they close.
 */
export function fixConnectionBaseline(shared: SharedArrayBuffer, openNow: number | null): void {
  if (openNow !== null) Atomics.compareExchange(new Int32Array(shared), BASELINE, 0, Math.max(1, openNow));
}

export interface ConnectionGateOptions {
  /** Connections the host serves at once. */
  max: number;
  /** A connection quiet this long is taken as closed (the server's idle timeout, plus a margin). */
  quietMs: number;
  /** Descriptors the process holds now, or null when unknown (then the known connections are the count). */
  openDescriptors: () => number | null;
  /** The host's shared count (allocateConnectionCount); absent: this thread's own. */
  shared?: SharedArrayBuffer;
  /** Workers sharing the count (each lets its share of the untracked headroom pass). */
  workers?: number;
  now?: () => number;
  warn?: (line: string) => void;
}

/** What the gate reads of a request's connection (Bun's Server). */
export interface PeerSource {
  requestIP(request: Request): { address: string; port: number } | null;
}

export class ConnectionGate {
  /** Known connections ("address port"), least recently active first, with their last request time. */
  private readonly seen = new Map<string, number>();
  /** The host's estimate of open connections: a descriptor count, plus the connections admitted since (by any worker). */
  private readonly cells: Int32Array;
  private sampledAt = -Infinity;
  private countable = true;
  /** Whether connections are being told apart (from half the cap up): below it every request is served without reading its peer. */
  private tracking = false;
  private requestsSinceSample = 0;
  /** Requests that may pass untracked before the count is sampled again (0: sample on the next). */
  private headroom = 0;
  private lastWarning = -Infinity;
  private readonly now: () => number;
  private readonly warn: (line: string) => void;
  /** New connections refused so far. */
  refused = 0;

  constructor(private readonly options: ConnectionGateOptions) {
    if (!Number.isInteger(options.max) || options.max < 1) throw new RangeError('the connection cap must be a positive integer');
    this.now = options.now ?? (() => performance.now());
    this.warn = options.warn ?? ((line) => console.warn(line));
    this.cells = new Int32Array(options.shared ?? allocateConnectionCount());
  }

  get max(): number {
    return this.options.max;
  }

  /**
   * Whether a request is served. Far below the cap this costs a counter:
   * the descriptor count is sampled every SAMPLE_MS or once as many requests
   * as could open the connections left below half the cap have passed.
   */
  allows(request: Request, peers: PeerSource): boolean {
    if (!this.tracking) {
      const n = ++this.requestsSinceSample;
      // Another worker may have seen the count rise: its estimate is shared.
      const rising = Atomics.load(this.cells, ESTIMATE) >= this.options.max >> 1;
      if (!rising && n < this.headroom && (n & 63) !== 0) return true;
      const t = this.now();
      if (!rising && n < this.headroom && t - this.sampledAt < SAMPLE_MS) return true;
      this.sample(t);
      if (!this.tracking) return true;
    }
    const peer = peers.requestIP(request);
    return peer === null || this.admit(peer.address, peer.port);
  }

  /** Whether a request arriving on the connection from `address`:`port` is served (the gate is tracking). */
  admit(address: string, port: number): boolean {
    const key = address + ' ' + port;
    const t = this.now();
    if (this.seen.delete(key)) {
      this.seen.set(key, t);
      return true;
    }
    this.forget(t);
    if (this.otherConnections(t) >= this.options.max || !this.reserve()) {
      this.refused++;
      // One line per ten seconds at most: the log is not another thing a flood can fill.
      if (t - this.lastWarning > 10_000) {
        this.lastWarning = t;
        this.warn(`[connections] ${this.options.max} connections open (IPINTEL_MAX_CONNECTIONS): new connections are answered 503 and closed (${this.refused} so far)`);
      }
      return false;
    }
    this.seen.set(key, t);
    if (this.seen.size > this.options.max) this.forget(t);
    return true;
  }

  /**
   * Counts this connection in the host's estimate until the next sample sees
   * its descriptor. The count is read and then added to, and another worker
   * may admit between the two: the add's own result decides, so two workers
   * never both take the last place (false: it was taken, nothing counted).
   */
  private reserve(): boolean {
    const before = Atomics.add(this.cells, ESTIMATE, 1);
    if (!this.countable || before < this.options.max) return true;
    Atomics.sub(this.cells, ESTIMATE, 1);
    return false;
  }

  /** Forgets connections quiet past the idle timeout, and the least active beyond `max` (the map is in activity order). */
  private forget(t: number): void {
    for (const [key, last] of this.seen) {
      if (this.seen.size <= this.options.max && t - last < this.options.quietMs) return;
      this.seen.delete(key);
    }
  }

  /**
   * Connections open now besides the one asking: descriptors beyond those
   * held before the first connection (the asking one's own is among them),
   * when they can be counted; else the known connections.
   */
  private otherConnections(t: number): number {
    if (!this.countable) return this.seen.size;
    const estimate = Atomics.load(this.cells, ESTIMATE);
    const due = estimate >= this.options.max * 0.9 ? NEAR_SAMPLE_MS : SAMPLE_MS;
    if (t - this.sampledAt < due) return estimate;
    return this.sample(t) ?? this.seen.size;
  }

  /** Counts descriptors now: sets the estimate, whether to track, and the untracked headroom; null when they cannot be counted. */
  private sample(t: number): number | null {
    this.sampledAt = t;
    this.requestsSinceSample = 0;
    const open = this.countable ? this.options.openDescriptors() : null;
    if (open === null) {
      this.countable = false;
      this.tracking = true;
      return null;
    }
    // The first sample fixes the baseline: before it no connection but the asking one is open.
    Atomics.compareExchange(this.cells, BASELINE, 0, Math.max(1, open - 1));
    const fresh = Math.max(0, open - Atomics.load(this.cells, BASELINE) - 1);
    Atomics.store(this.cells, ESTIMATE, fresh);
    const half = Math.floor(this.options.max / 2);
    if (fresh >= half) this.tracking = true;
    else if (this.tracking && fresh < Math.floor(this.options.max / 4)) {
      // Far below the cap again: stop telling connections apart.
      this.tracking = false;
      this.seen.clear();
    }
    this.headroom = Math.max(1, Math.floor((half - fresh) / (this.options.workers ?? 1)));
    return fresh;
  }
}
