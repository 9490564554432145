/**
 * The publisher role (IPINTEL_ROLE=publisher): the feed refresher builds as
 * on any server, and every verified build (and the index found at start) is
 * published to IPINTEL_PUBLISH_DIR for pulling servers. A failed publish is
 * logged and the previous publish stays.
 */
import { resolve } from 'node:path';
import type { PublishConfig } from './config.ts';
import { publishIndex } from './index/publish/publish.ts';
import { readSigningKey } from './index/publish/signing-keys.ts';

/** Publishes indexes with the configured key; throws at creation when the key cannot be read. */
export function createIndexPublisher(publish: PublishConfig, log: (line: string) => void = (l) => console.error(l)): (indexPath: string) => void {
  const key = readSigningKey(publish.signingKeyPath);
  const dir = resolve(publish.dir);
  log(`publisher: publishing every verified build to ${dir} (keeping ${publish.keep} versions); serving /health, /metrics and /v1/data/status only`);
  return (indexPath) => {
    try {
      const m = publishIndex({ indexPath, dir, privateKey: key, keep: publish.keep });
      log(`publisher: ${dir}/${m.file} is published (built ${m.built_at}, sha256 ${m.sha256.slice(0, 16)})`);
    } catch (e) {
      log(`publisher: publishing ${indexPath} failed, the previous publish stays: ${(e as Error).message}`);
    }
  };
}
