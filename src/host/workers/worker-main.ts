/**
 * One serving worker thread (started by pool.ts): the whole server over the
 * shared index file, listening with SO_REUSEPORT on the host's port, its
 * rate limits in the host's shared buckets. Answers the primary's calls:
 * reload, metrics, sync-keys, stop.
 */
import type { Config } from '../../config.ts';
import { ApiError, ERROR_STATUS, type ErrorCode } from '../../api-error.ts';
import type { HostLink } from '../../http/host-link.ts';
import { createAdminFailureBudget, createRateLimiterFromConfig, type SharedBucketsMemory } from '../../http/ratelimit/index.ts';
import { reloadLocally } from '../../http/reload-server.ts';
import { OverridesHolder, type OverridesLoad, type PublishedOverrides } from '../../lookup/overrides/holder.ts';
import type { ReloadBody } from '../../contract/service.ts';
import { createConfigServices, prepareServer, recordServedHistory, type ConfigServices, type PreparedServer, type RunningServer } from '../start-server.ts';
import { openAccountStore } from '../open-accounts.ts';
import { feedsStatusView } from '../../feeds/worker-view.ts';
import type { RadarClient } from '../../lookup/radar.ts';
import { HostState } from './host-state.ts';
import { installProcessGuards } from '../process-guards.ts';
import { RemoteError, Rpc } from './rpc.ts';
import { mapEarlyIndex, openVerifiedIndex, settleEarlyIndex, type VerifiedIndex } from './verified-index.ts';
import type { AppServices } from '../../http/services.ts';

declare const self: Worker;

/** The primary's first message to a worker, as soon as its code has loaded: it opens what needs only the configuration. */
export interface WorkerStart {
  kind: 'start';
  slot: number;
  config: Config;
  buckets: SharedBucketsMemory | null;
  /** The host's budget of refused admin tokens (http/ratelimit/admin-budget.ts). */
  adminBuckets: SharedBucketsMemory;
  /** The host's count of open connections (http/connection-gate.ts). */
  connections: SharedArrayBuffer;
  host: SharedArrayBuffer;
  generation: number;
  /** The compiled binary's embedded migrations (null from the source tree). */
  migrationsRoot: string | null;
  /** Listen once prepared (a restarted worker); else report `prepared` and wait for the primary's `listen` call (a host starting: no worker accepts before every worker has loaded its code). */
  listen: boolean;
}

/** The primary's second message, once the host's migrations ran and its overrides were read: the worker opens the database and prepares its app. */
export interface WorkerMigrated {
  kind: 'migrated';
  /** The overrides table the primary read (null: none, or none applied yet). */
  overrides: PublishedOverrides | null;
}

/** The primary's third message, once it checked the index: the worker keeps or re-opens the file it mapped, and only then reports itself prepared. */
export interface WorkerOpen {
  kind: 'open';
  /** The index file the primary verified (null: this worker verifies it). */
  index: VerifiedIndex | null;
}

/** Where a worker listens, and whose index it serves. */
export interface WorkerListening {
  port: number;
  managedBy: 'server' | 'operator';
}

/** A worker's first message back: listening, prepared (code loaded, services open, not listening), or failed. */
export type WorkerStarted = ({ kind: 'ready' } & WorkerListening) | { kind: 'prepared' } | { kind: 'failed'; message: string };

/** Bound on a reload across the host (every worker maps and verifies the file). */
const RELOAD_TIMEOUT_MS = 120_000;
/** Bound on collecting the host's metrics. */
const METRICS_TIMEOUT_MS = 10_000;
/** Bound on a radar lookup through the primary (its own upstream timeout is shorter). */
const RADAR_TIMEOUT_MS = 5_000;
/** Bound on the other workers re-reading keys after a revocation. */
const KEYS_TIMEOUT_MS = 5_000;

/** An error the primary passed back, as the ApiError it was when thrown. */
function asApiError(e: unknown): unknown {
  if (!(e instanceof RemoteError)) return e;
  const { code, message, details } = e.wire;
  if (code !== null && code in ERROR_STATUS) return new ApiError(code as ErrorCode, message, (details ?? {}) as Record<string, unknown>);
  return e;
}

/** Prefixes this thread's console lines with its slot, so the host's log says which worker. */
function labelLogs(slot: number): void {
  for (const method of ['log', 'info', 'warn', 'error'] as const) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => original(`[worker ${slot}]`, ...args);
  }
}

let server: RunningServer | null = null;
let prepared: PreparedServer | null = null;
let state: HostState | null = null;
let slotOfThis = -1;
/** Starts recording the served index into the history (slot 0 only), once this worker listens. */
let recordHistory: (() => void) | null = null;

/** Starts listening on `port` (SO_REUSEPORT: the workers of a host share it). */
function listen(port: number): WorkerListening {
  if (!prepared || !state) throw new Error('worker not prepared');
  server ??= prepared.listen({ reusePort: true, port });
  // Recording starts the history thread, whose code would load on the start's two cores before any worker listened.
  recordHistory?.();
  recordHistory = null;
  state.setGeneration(slotOfThis, server.services.index.generation);
  const managedBy = server.services.index.current.meta.managedBy === 'server' ? 'server' : 'operator';
  return { port: server.port, managedBy };
}

const rpc = new Rpc(self, async (op, args) => {
  if (op === 'listen') return listen((args as { port: number }).port);
  if (!server || !state) throw new Error(`worker not started (${op})`);
  const s = server.services;
  switch (op) {
    case 'reload': {
      const { generation, overrides } = args as { generation: number; overrides: OverridesLoad | null };
      const answer = await reloadLocally(s, generation, overrides);
      state.setGeneration(slotOfThis, answer.index.generation);
      return answer;
    }
    case 'metrics':
      return s.metrics.json();
    case 'overrides':
      // The primary read the file once for the host; this is its table's shared memory.
      s.overrides.apply(args as PublishedOverrides);
      return null;
    case 'mirror-reveal': {
      // A first key's secret held or forgotten by another worker (src/accounts/store.ts onRevealChange).
      const { sessionHash, held } = args as { sessionHash: string; held: { secret: string; until: number } | null };
      s.accounts.mirrorReveal(sessionHash, held);
      return null;
    }
    case 'sync-keys':
      return s.accounts.syncKeys();
    case 'stop':
      state.setGeneration(slotOfThis, 0);
      await server.stop(true);
      server = null;
      return null;
    default:
      throw new Error(`unknown call ${op}`);
  }
});

/** Resolve with the primary's `migrated` and `open` messages. */
let migratedNow: (message: WorkerMigrated) => void = () => {};
const migrated = new Promise<WorkerMigrated>((resolve) => (migratedNow = resolve));
let opened: (open: WorkerOpen) => void = () => {};
const open = new Promise<WorkerOpen>((resolve) => (opened = resolve));

self.onmessage = (event: MessageEvent) => {
  if (rpc.receive(event.data)) return;
  const message = event.data as WorkerStart | WorkerMigrated | WorkerOpen;
  if (message?.kind === 'start') void begin(message);
  else if (message?.kind === 'migrated') migratedNow(message);
  else if (message?.kind === 'open') opened(message);
};

async function begin(start: WorkerStart): Promise<void> {
  slotOfThis = start.slot;
  labelLogs(start.slot);
  installProcessGuards();
  state = new HostState(start.host);
  const host: HostLink = {
    slot: start.slot,
    connections: start.connections,
    reloadAll: () => rpc.call<ReloadBody>('reload-all', null, RELOAD_TIMEOUT_MS).catch((e) => Promise.reject(asApiError(e))),
    metricsText: () => rpc.call<string>('metrics-all', null, METRICS_TIMEOUT_MS),
    agreed: () => state!.agreed(),
    keysChanged: () => rpc.call<void>('keys-changed', null, KEYS_TIMEOUT_MS),
  };
  try {
    // What needs only the configuration opens now, while the primary still migrates and checks the index.
    const limiter = createRateLimiterFromConfig(start.config, start.buckets ?? undefined);
    // Radar answers come from the host's one client (pool.ts), so its cache and per-caller budgets are the host's.
    const radar: RadarClient | undefined = start.config.radarUrl
      ? { lookup: (asn, caller) => rpc.call<unknown>('radar', { asn, caller }, RADAR_TIMEOUT_MS).catch(() => null) }
      : undefined;
    const early = await createConfigServices(start.config, { limiter, radar, adminFailures: createAdminFailureBudget(start.adminBuckets) });
    // The index mapped and parsed, not hashed, while the primary checks it: the app is prepared over it meanwhile,
    // and nothing is answered from it before the primary's verdict says it is the file verified (settleEarlyIndex).
    const earlyIndex = mapEarlyIndex(start.config.indexPath);
    const { overrides: published } = await migrated;
    const accounts = await openAccountStore(start.config.dbPath, {
      migrationsRoot: start.migrationsRoot ?? undefined,
      // The primary migrated this file before its `migrated` message; an in-memory database is this thread's own.
      migrated: start.config.dbPath !== ':memory:',
      onRevealChange: (sessionHash, held) =>
        rpc
          .call<void>('reveal', { sessionHash, held }, KEYS_TIMEOUT_MS)
          .catch((e) => console.error(`first key not held by every worker: ${(e as Error).message}`)),
      onKeyRevoked: () => host.keysChanged().catch((e) => console.error(`key revocation not confirmed by every worker: ${(e as Error).message}`)),
    });
    // The primary reads and watches the overrides file; this worker only takes its tables.
    const overrides = new OverridesHolder(start.config.overridesPath);
    if (published !== null) overrides.apply(published);
    const services = { ...early, accounts, host, overrides };
    // A file the early mapping could not parse, or an app that failed over it, is prepared again after the verdict.
    let ready = earlyIndex === null ? null : await prepareFrom(start, { ...services, index: earlyIndex.holder }).catch(() => null);
    const { index: verified } = await open;
    if (ready !== null && earlyIndex !== null && settleEarlyIndex(earlyIndex, verified, start.generation)) {
      // Another file than the one mapped early (or one the primary refused) is what the holder now serves, verified.
      ready.services.feeds = feedsStatusView(start.config, ready.services.index);
    }
    ready ??= await prepareFrom(start, { ...services, index: openVerifiedIndex(start.config.indexPath, verified) });
    // One worker of the host records what the host serves: verified, from when it serves.
    const served = ready.services;
    if (start.slot === 0) recordHistory = () => recordServedHistory(start.config, served);
    prepared = ready;
    if (start.listen) self.postMessage({ kind: 'ready', ...listen(start.config.port) } satisfies WorkerStarted);
    else self.postMessage({ kind: 'prepared' } satisfies WorkerStarted);
  } catch (e) {
    self.postMessage({ kind: 'failed', message: (e as Error).message } satisfies WorkerStarted);
  }
}

/** Prepares the app over `services` (its index not yet recorded into the history), with the feeds' status view. */
async function prepareFrom(start: WorkerStart, services: ConfigServices & Pick<AppServices, 'index' | 'accounts' | 'host' | 'overrides'>): Promise<PreparedServer> {
  const ready = await prepareServer(start.config, services, { recordsHistory: false });
  ready.services.index.generation = start.generation;
  // The primary refreshes (src/cli.ts) and swaps every worker; a worker only reports the shared state files.
  ready.services.feeds = feedsStatusView(start.config, ready.services.index);
  return ready;
}
