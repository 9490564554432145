/**
 * A pulling server's start (IPINTEL_INDEX_URL): one puller per host, in the
 * primary; with no index on disk yet it answers 503 (the waiting server)
 * until the first verified index is in place, or builds the embedded default
 * when IPINTEL_INDEX_FALLBACK=default. Later swaps reload every worker.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config, PullConfig } from './config.ts';
import { startWaitingServer } from './http/waiting-server.ts';
import { IndexPuller } from './index/pull/index-puller.ts';
import { readPullStatus } from './index/pull/pull-status-file.ts';
import { readPublicKey } from './index/publish/signing-keys.ts';

/** A started puller whose swaps go wherever `onSwap` last pointed them. */
export interface PullingIndex {
  puller: IndexPuller;
  /** What a swap reloads once the server runs (before: nothing; the server opens the file it finds). */
  onSwap(reload: () => Promise<unknown>): void;
  close(): void;
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
    writeStatus: true,
    log,
    swap: async () => {
      if (first) first();
      else await reload();
    },
  });
  log(`index: pulling ${pull.url} every ${Math.round(pull.pollMs / 1000)} s into ${localPath} (its folder must be writable; feeds are never fetched here)`);
  if (!existsSync(localPath) && pull.fallback === 'default') {
    log(`no index at ${localPath}: building the embedded default until the first verified pull (IPINTEL_INDEX_FALLBACK=default)`);
    await buildDefault();
  }
  if (existsSync(localPath)) {
    puller.start();
  } else {
    const waiting = startWaitingServer(config.host, config.port, () => readPullStatus(localPath));
    log(`no index at ${localPath} yet: /health and lookups answer 503 until the first verified pull`);
    await new Promise<void>((done) => {
      first = done;
      puller.start();
    });
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
