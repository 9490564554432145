/**
 * The publisher role (IPINTEL_ROLE=publisher): the feed refresher builds as
 * on any server, and every verified build (and the index found at start) is
 * published to IPINTEL_PUBLISH_DIR for pulling servers. A failed publish is
 * logged and the previous publish stays.
 */
import { resolve } from 'node:path';
import type { PublishConfig } from '../config.ts';
import { publishIndex } from '../index/publish/publish.ts';
import { readSigningKey } from '../index/publish/signing-keys.ts';
import type { PublishedManifest } from '../index/publish/signed-manifest.ts';
import type { PublisherHistory } from '../index/publish/publish-history.ts';
import type { HistoryConfig } from '../index/history/past-indexes.ts';
import { HistoryJobs } from '../index/history/jobs.ts';
import { recordPublishedIndex } from '../index/history/recorder.ts';

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

/** A publish's sizes in words: full, compressed, each delta. */
function transfersLine(m: PublishedManifest): string {
  const parts = [`full ${mib(m.size)}`];
  if (m.compressed) parts.push(`compressed ${mib(m.compressed.size)}`);
  for (const d of m.deltas ?? []) parts.push(`delta from ${d.from_sha256.slice(0, 12)} ${mib(d.size)}`);
  return parts.join(', ');
}

/** Publishes indexes with the configured key, and with `history` (IPINTEL_HISTORY) the history of what it published; throws at creation when the key cannot be read. */
export function createIndexPublisher(publish: PublishConfig, history: HistoryConfig | null, log: (line: string) => void = (l) => console.error(l)): (indexPath: string) => Promise<void> {
  const key = readSigningKey(publish.signingKeyPath);
  const dir = resolve(publish.dir);
  log(`publisher: publishing every verified build to ${dir} (keeping ${publish.keep} versions${history ? `, and the history of what it published from ${history.dir}` : ''}); serving /health, /metrics and /v1/data/status only`);
  const jobs = history ? new HistoryJobs() : null;
  const published: PublisherHistory | undefined = history ? { dir: history.dir, record: (path, at) => recordPublishedIndex(history, jobs!, path, at) } : undefined;
  // One publish at a time, in order: each copies its index before it yields, then makes its transfers.
  let queue: Promise<void> = Promise.resolve();
  return (indexPath) => {
    queue = queue.then(async () => {
      try {
        const m = await publishIndex({ indexPath, dir, privateKey: key, keep: publish.keep, history: published, log: (line) => log(`publisher: ${line}`) });
        log(`publisher: ${dir}/${m.file} is published (built ${m.built_at}, sha256 ${m.sha256.slice(0, 16)}; ${transfersLine(m)})`);
      } catch (e) {
        log(`publisher: publishing ${indexPath} failed, the previous publish stays: ${(e as Error).message}`);
      }
    });
    return queue;
  };
}
