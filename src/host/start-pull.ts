/**
 * A pulling server's start (IPINTEL_INDEX_URL): one puller per host, in the
 * primary. The file at IPINTEL_INDEX is served only when it verifies against
 * its sidecar manifest with the configured key (IndexPuller.adoptLocal);
 * without such a file it answers 503 (the waiting server) until the first
 * verified index is in place, or builds the embedded default when
 * IPINTEL_INDEX_FALLBACK=default. Later swaps reload every worker.
 */
import { resolve } from 'node:path';
import type { Config, PullConfig } from '../config.ts';
import { startWaitingServer } from '../http/waiting-server.ts';
import { IndexPuller } from '../index/pull/index-puller.ts';
import { HistoryJobs } from '../index/history/jobs.ts';
import { readPullStatus } from '../index/pull/pull-status-file.ts';
import { readPublicKey } from '../index/publish/signing-keys.ts';
import { signalStopper } from './process-guards.ts';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** A started puller whose swaps go wherever `onSwap` last pointed them. */
export interface PullingIndex {
  puller: IndexPuller;
  /** What a swap reloads once the server runs (before: nothing; the server opens the file it finds). */
  onSwap(reload: () => Promise<unknown>): void;
  /** Stops polling and any download in flight (its partial file removed). */
  close(): Promise<void>;
}

/** Starts pulling `pull.url` into `config.indexPath`; resolves once an index is on disk (pulled, already there, or the fallback built). Throws on a bad public key. */
export async function startPullingIndex(
  config: Config,
  pull: PullConfig,
  buildDefault: () => Promise<void>,
  log: (line: string) => void = (l) => console.error(l),
): Promise<PullingIndex> {
  const publicKey = readPublicKey(pull.publicKey);
  const localPath = resolve(config.indexPath);
  let reload: () => Promise<unknown> = async () => {};
  let first: (() => void) | null = null;
  const puller = new IndexPuller({
    indexUrl: pull.url,
    publicKey,
    localPath,
    pollMs: pull.pollMs,
    maxAgeMs: pull.maxAgeMs,
    writeStatus: true,
    // The publisher's history, when it publishes one, replaces what this server would record (IPINTEL_HISTORY=off: none is fetched).
    history: config.history ? { config: config.history, jobs: new HistoryJobs() } : undefined,
    log,
    swap: async () => {
      if (first) first();
      else await reload();
    },
  });
  log(`index: pulling ${pull.url} every ${Math.round(pull.pollMs / 1000)} s into ${localPath} (its folder must be writable; feeds are never fetched here)`);
  let verified = puller.adoptLocal();
  if (!verified && pull.fallback === 'default') {
    log(`no verified index at ${localPath}: building the embedded default until the first verified pull (IPINTEL_INDEX_FALLBACK=default)`);
    await buildDefault();
    verified = true;
  }
  if (verified) {
    puller.start();
  } else {
    const waiting = startWaitingServer(config.host, config.port, () => readPullStatus(localPath));
    log(`no verified index at ${localPath} yet: /health and lookups answer 503 until the first verified pull`);
    // Stopped while waiting: the download in flight is aborted and its partial file removed before the exit.
    const onSignal = signalStopper(async () => {
      await puller.close();
      await waiting.stop();
    });
    const stopOnSignal = () => void onSignal();
    for (const signal of STOP_SIGNALS) process.on(signal, stopOnSignal);
    await new Promise<void>((done) => {
      first = done;
      puller.start();
    });
    for (const signal of STOP_SIGNALS) process.off(signal, stopOnSignal);
    first = null;
    await waiting.stop();
  }
  return {
    puller,
    onSwap(next) {
      reload = next;
    },
    close: () => puller.close(),
  };
}
