/**
 * The primary of a host serving with several workers (IPINTEL_WORKERS > 1):
 * starts one worker thread per slot on one port (SO_REUSEPORT, so the
 * kernel spreads connections), restarts a worker that exits unasked and
 * counts the crash, carries /reload, /metrics and key revocations between
 * the workers, and drains them all on stop. It serves no request itself.
 * Why threads and not processes: docs/deployment.md ("Workers").
 */
import { memoryBudget } from '../../memory-budget.ts';
import { Serial } from '../../accounts/serial.ts';
import type { Config } from '../../config.ts';
import { allocateConnectionCount, fixConnectionBaseline } from '../../http/connection-gate.ts';
import { openDescriptorCount } from '../../net/descriptor-limit.ts';
import { CALLER_BUDGET_BUCKETS } from '../../http/ratelimit/caller-budget.ts';
import { allocateSharedBuckets, type SharedBucketsMemory } from '../../http/ratelimit/index.ts';
import type { ReloadBody } from '../../contract/service.ts';
import { embeddedMigrationsRoot, openAccountStore } from '../open-accounts.ts';
import { isCompiledBinary } from '../../feeds/compiled-binary.ts';
import type { OverridesHolder, OverridesLoad } from '../../lookup/overrides/holder.ts';
import type { RadarClient } from '../../lookup/radar.ts';
import { HostState } from './host-state.ts';
import { RemoteError, Rpc } from './rpc.ts';
import { workerEntry, type StartedThread } from './threads.ts';
import { releaseVerifyMappings, verifyForWorkers, type VerifiedIndex } from './verified-index.ts';
import type { WorkerListening, WorkerMigrated, WorkerOpen, WorkerStart, WorkerStarted } from './worker-main.ts';

/** A running pool. */
export interface WorkerPool {
  readonly url: string;
  readonly port: number;
  readonly state: HostState;
  /** The thread in a slot right now (null while it restarts). */
  worker(slot: number): Worker | null;
  /** Resolves once the worker in `slot` (a restarted one too) serves. */
  serving(slot: number): Promise<void>;
  /** Whose index the workers serve, by its header (the first worker's answer). */
  readonly managedBy: 'server' | 'operator';
  /** When the index every worker serves was loaded (the pool's start or its last reload), ms. */
  loadedAt(): number;
  /** Reloads every worker onto the index file (as /reload does); rejects when refused. */
  reloadAll(): Promise<ReloadBody>;
  /** Drains every worker (requests in flight finish) and stops them. */
  stop(): Promise<void>;
}

/** Bound on one worker's start (opening the index and the database). */
const START_TIMEOUT_MS = 60_000;
/** Bound on one worker draining at stop. */
const STOP_TIMEOUT_MS = 30_000;
/** First delay before restarting a crashed worker; doubles while it keeps crashing soon after start, up to the max. */
const RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 10_000;
/** A worker that served this long has its restart delay reset. */
const STABLE_MS = 30_000;
/** Bound on reload and metrics calls to one worker. */
const CALL_TIMEOUT_MS = 110_000;

/** What a starting worker waits for: the host's migrations and overrides read (it then opens the database and prepares its app), and the index's check (it then may serve). */
interface StartGates {
  migrated: Promise<unknown>;
  checked: Promise<unknown>;
}

/** A restarted worker's: the host's migrations ran and its index was checked long ago. */
const NO_GATES: StartGates = { migrated: Promise.resolve(), checked: Promise.resolve() };

interface Slot {
  worker: Worker | null;
  rpc: Rpc | null;
  ready: Promise<void>;
  startedAt: number;
  restartDelay: number;
}

/**
 * Starts `config.workers` workers; rejects (stopping those started) when none
 * can start. The workers load their code at once (or already do: `threads`,
 * started by startThreads); they open the database only once `before`
 * resolves (the host's migrations; without it the pool runs them here first:
 * workers migrating one fresh file at once fail on each other's tables), so
 * both overlap. The index is verified here, in the primary, once for all.
 */
export async function startWorkerPool(
  config: Config,
  log: (line: string) => void = (l) => console.error(l),
  before: Promise<unknown> | null = null,
  threads: StartedThread[] = [],
): Promise<WorkerPool> {
  const count = config.workers;
  const migrationsRoot = isCompiledBinary() ? embeddedMigrationsRoot() : null;
  const migrated = before ?? openAccountStore(config.dbPath, { flushIntervalMs: 0, syncIntervalMs: 0 }).then((store) => store.close());
  const state = HostState.create(count);
  const memory = memoryBudget(config.memoryMb);
  const buckets: SharedBucketsMemory | null = config.rateLimits ? allocateSharedBuckets(memory.rateLimitBuckets) : null;
  const adminBuckets = allocateSharedBuckets(CALLER_BUDGET_BUCKETS);
  const connections = allocateConnectionCount();
  // One radar client for the host: its cache and per-caller budgets serve every worker (the upstream quota is the operator's).
  // Made on the first radar call, not on the primary's path to the workers' start.
  let radar: Promise<RadarClient> | null = null;
  // The overrides file is read once per host, here, off every serving thread (while the workers load); each worker gets the table's shared memory.
  let overrides: OverridesHolder | null = null;
  const overridesRead =
    config.overridesPath === null
      ? Promise.resolve()
      : // Its code loads only where a file is named: off the primary's path to the workers' start otherwise.
        import('../../lookup/overrides/holder.ts').then(({ OverridesHolder }) => OverridesHolder.start(config.overridesPath!, log, { maxTableBytes: memory.overridesBytes })).then((holder) => {
          overrides = holder;
          if (stopping) return;
          // A new table goes to every worker before any later call (a reload's answer names it).
          holder.onChange(() => {
            for (const s of live()) s.rpc.call('overrides', holder.published, CALL_TIMEOUT_MS).catch((e) => log(`[primary] overrides not taken by a worker: ${(e as Error).message}`));
          });
          holder.watch();
        });
  const reloads = new Serial();
  const slots: Slot[] = [];
  let generation = 1;
  let port = config.port;
  let stopping = false;
  let started = false;
  let managedBy: 'server' | 'operator' = 'operator';
  let loadedAt = Date.now();
  /** The index file the primary verified for the workers (null: each worker verifies it). */
  let verified: VerifiedIndex | null = null;

  const live = () => slots.filter((s): s is Slot & { rpc: Rpc } => s.rpc !== null && s.worker !== null);

  /** Answers a worker's calls to the host. */
  const serveCall =
    (from: number) =>
    async (op: string, args: unknown): Promise<unknown> => {
      switch (op) {
        case 'reload-all':
          return reloads.run(() => reloadAll());
        case 'metrics-all': {
          const perWorker = await Promise.all(live().map((s) => s.rpc.call<unknown[]>('metrics', null, CALL_TIMEOUT_MS)));
          const serving = slots.filter((_, i) => state.generationOf(i) !== 0).length;
          // prom-client's aggregation loads on the first /metrics, not before the workers listen.
          const { hostMetricsText } = await import('./host-metrics.ts');
          return hostMetricsText(perWorker, { workers: count, serving, crashes: state.crashes });
        }
        case 'reveal': {
          // A first key held for (or taken by) a session's next dashboard view, which any worker may serve.
          const others = live().filter((s) => s !== slots[from]);
          await Promise.all(others.map((s) => s.rpc.call('mirror-reveal', args, CALL_TIMEOUT_MS)));
          return null;
        }
        case 'radar': {
          const { asn, caller } = args as { asn: number; caller: string };
          radar ??= import('../../http/radar-from-config.ts').then(({ createRadarFromConfig }) => createRadarFromConfig(config, memory));
          return (await radar).lookup(asn, caller);
        }
        case 'keys-changed': {
          const others = live().filter((s) => s !== slots[from]);
          await Promise.all(others.map((s) => s.rpc.call('sync-keys', null, CALL_TIMEOUT_MS)));
          return null;
        }
        default:
          throw new Error(`unknown call ${op}`);
      }
    };

  /** Reloads every worker onto the next generation; one answer for the host. */
  async function reloadAll(): Promise<ReloadBody> {
    const next = generation + 1;
    const read: OverridesLoad | null = overrides === null ? null : await overrides.reloadOffThread();
    const targets = live();
    const results = await Promise.allSettled(targets.map((s) => s.rpc.call<ReloadBody>('reload', { generation: next, overrides: read }, CALL_TIMEOUT_MS)));
    const done = results.filter((r): r is PromiseFulfilledResult<ReloadBody> => r.status === 'fulfilled');
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (done.length > 0) {
      generation = next;
      loadedAt = Date.now();
    }
    if (failed.length === 0) return done[0]!.value;
    // Every worker refused the same file: nothing changed anywhere, the refusal is the answer.
    if (done.length === 0) throw failed[0]!.reason instanceof RemoteError ? failed[0]!.reason.wire : failed[0]!.reason;
    throw {
      code: 'SERVICE_UNAVAILABLE',
      message: `Reloaded in ${done.length} of ${targets.length} workers; /health answers 503 until a reload succeeds in all`,
      details: { what: 'workers', reloaded: done.length, workers: targets.length },
    };
  }

  /**
   * Starts a worker in `slot`. Resolves once it serves (`listenAtOnce`: a
   * restart), or once it has loaded its code, opened its services and taken
   * the checked index without listening (a host starting: listenOn follows).
   */
  function spawn(slot: number, listenAtOnce = true, gates: StartGates = NO_GATES, early: StartedThread | null = null): Promise<void> {
    // A thread started early that already exited is replaced (its exit was before any listener below).
    if (early?.closed) log(`[primary] worker ${slot} exited while loading${early.error ? `: ${early.error}` : ''}; starting it again`);
    const worker = early && !early.closed ? early.worker : new Worker(workerEntry());
    const s: Slot = slots[slot] ?? { worker: null, rpc: null, ready: Promise.resolve(), startedAt: 0, restartDelay: RESTART_DELAY_MS };
    slots[slot] = s;
    s.worker = worker;
    s.startedAt = Date.now();
    const rpc = new Rpc(worker, serveCall(slot));
    let failStart: ((e: Error) => void) | null = null;
    s.ready = new Promise<void>((resolve, reject) => {
      failStart = reject;
      const timer = setTimeout(() => reject(new Error(`worker ${slot} did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      worker.onmessage = (event: MessageEvent) => {
        if (rpc.receive(event.data)) return;
        const first = event.data as WorkerStarted;
        clearTimeout(timer);
        failStart = null;
        if (first.kind === 'failed') return reject(new Error(first.message));
        if (first.kind === 'ready') {
          port = first.port;
          managedBy = first.managedBy;
        }
        s.rpc = rpc;
        resolve();
      };
    });
    let lastError = early && !early.closed ? early.error : '';
    worker.addEventListener('error', (event) => {
      lastError = (event as ErrorEvent).message ?? String(event);
      log(`[primary] worker ${slot} error: ${lastError}`);
    });
    worker.addEventListener('close', () => {
      rpc.abandon(`worker ${slot} exited`);
      failStart?.(new Error(`worker ${slot} exited before serving${lastError ? `: ${lastError}` : ''}`));
      if (s.worker !== worker) return;
      s.worker = null;
      s.rpc = null;
      state.setGeneration(slot, 0);
      // A worker of a pool still starting is retried once the pool serves (see the start below).
      if (stopping || !started) return;
      restartLater(slot, 'exited unasked');
    });
    // The thread loads its code now, then opens what needs only the configuration; the database and its app once
    // the host migrated; it serves only the index the host checked (or one it verifies itself), after `open`.
    const start: WorkerStart = { kind: 'start', slot, config: { ...config, port }, buckets, adminBuckets, connections, host: state.buffer, generation, migrationsRoot, listen: listenAtOnce };
    worker.postMessage(start);
    const send = (gate: Promise<unknown>, message: () => WorkerMigrated | WorkerOpen) =>
      gate.then(
        () => s.worker === worker && worker.postMessage(message()),
        (e: unknown) => failStart?.(e as Error),
      );
    send(gates.migrated, () => ({ kind: 'migrated', overrides: overrides?.published ?? null }));
    send(gates.checked, () => ({ kind: 'open', index: verified }));
    return listenAtOnce ? s.ready.then(() => catchUp(slot, rpc)) : s.ready;
  }

  /** Counts a worker's exit and starts it again after its delay (doubling while it keeps failing soon after start). */
  function restartLater(slot: number, why: string): void {
    const s = slots[slot]!;
    state.countCrash();
    if (Date.now() - s.startedAt > STABLE_MS) s.restartDelay = RESTART_DELAY_MS;
    const delay = s.restartDelay;
    s.restartDelay = Math.min(MAX_RESTART_DELAY_MS, s.restartDelay * 2);
    log(`[primary] worker ${slot} ${why} (crash ${state.crashes}); restarting in ${delay} ms`);
    setTimeout(() => {
      if (stopping) return;
      void spawn(slot).catch((e) => {
        log(`[primary] worker ${slot} failed to restart: ${(e as Error).message}`);
        // Its exit is counted and retried later, with a longer delay.
        slots[slot]?.worker?.terminate();
      });
    }, delay);
  }

  /** A worker that started on a generation a reload has since passed (it began during the reload) catches up. */
  const catchUp = (slot: number, rpc: Rpc) =>
    reloads.run(async () => {
      if (state.generationOf(slot) !== generation && slots[slot]!.rpc === rpc) await rpc.call('reload', { generation, overrides: overrides?.last ?? null }, CALL_TIMEOUT_MS);
    });

  /** Has a prepared worker listen on `on` (0: an ephemeral port, which the others then join). */
  async function listenOn(slot: number, on: number): Promise<void> {
    const rpc = slots[slot]!.rpc!;
    const listening = await rpc.call<WorkerListening>('listen', { port: on }, START_TIMEOUT_MS);
    port = listening.port;
    managedBy = listening.managedBy;
    await catchUp(slot, rpc);
  }

  const stopAll = async () => {
    stopping = true;
    overrides?.close();
    await Promise.all(
      slots.map(async (s) => {
        const { worker, rpc } = s;
        if (!worker) return;
        try {
          if (rpc) await rpc.call('stop', null, STOP_TIMEOUT_MS);
        } catch (e) {
          log(`[primary] worker did not drain: ${(e as Error).message}`);
        }
        s.worker = null;
        s.rpc = null;
        worker.terminate();
      }),
    );
  };

  const failed: Array<{ slot: number; why: string }> = [];
  try {
    // Every worker loads its code and opens its services at once, none listening yet: a flood from the
    // moment the port accepts finds every worker's code loaded (no module read competes for descriptors).
    // The index is verified here once, after the workers have begun loading (the next timer tick), while they load:
    // not by every worker, each hashing the whole file on the same cores at the same moment. Not on a thread of
    // its own either: on two cores the start is CPU-bound, and a thread costs its own runtime and code (~55 ms of CPU).
    const indexVerified = Bun.sleep(0).then(() => verifyForWorkers(config.indexPath)).then((file) => {
      verified = file;
    });
    const gates: StartGates = { migrated: Promise.all([migrated, overridesRead]), checked: Promise.all([migrated, overridesRead, indexVerified]) };
    const prepared = await Promise.allSettled(Array.from({ length: count }, (_, i) => spawn(i, false, gates, threads[i] ?? null)));
    const ok: number[] = [];
    prepared.forEach((r, slot) => (r.status === 'fulfilled' ? ok.push(slot) : failed.push({ slot, why: (r.reason as Error).message })));
    // None could start: the cause is the host's (its index, its database), not a worker's bad luck.
    if (ok.length === 0) throw (prepared[0] as PromiseRejectedResult).reason;
    // A set port: every worker binds it at once. PORT=0: the first binds an ephemeral one, the others join it.
    const first = config.port === 0 ? ok.slice(0, 1) : ok;
    const bound = await Promise.allSettled(first.map((slot) => listenOn(slot, config.port)));
    if (!bound.some((r) => r.status === 'fulfilled')) throw (bound[0] as PromiseRejectedResult).reason;
    const rest = ok.slice(first.length);
    const joined = await Promise.allSettled(rest.map((slot) => listenOn(slot, port)));
    [...bound, ...joined].forEach((r, i) => r.status === 'rejected' && failed.push({ slot: [...first, ...rest][i]!, why: (r.reason as Error).message }));
    // Every listening socket is open and the primary is idle: the descriptors now are the host's own.
    fixConnectionBaseline(connections, openDescriptorCount());
  } catch (e) {
    releaseVerifyMappings();
    await stopAll();
    throw e;
  }
  started = true;
  releaseVerifyMappings();
  // A worker that failed to start is retried in the background; the host serves with the others meanwhile.
  for (const { slot, why } of failed) {
    const worker = slots[slot]?.worker;
    if (worker) {
      log(`[primary] worker ${slot} failed to start: ${why}; stopping it to start it again`);
      worker.terminate(); // its exit restarts it
    } else restartLater(slot, `failed to start: ${why}`);
  }
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    state,
    worker: (slot) => slots[slot]?.worker ?? null,
    serving: (slot) => slots[slot]!.ready,
    managedBy,
    loadedAt: () => loadedAt,
    reloadAll: () => reloads.run(() => reloadAll()),
    stop: stopAll,
  };
}
