/**
 * The embedded default index (the data packages `bun install` brings: DB-IP
 * location, ASN ranges; no routing, Tor, VPN or threat lists), cached in the
 * temp folder under a fingerprint of the builder like the full index.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIndex } from '../../index-builder/build.ts';
import { packageSources } from '../../index-builder/default-sources.ts';
import { builderFingerprint } from './fixture-index.ts';

let built: Promise<string> | null = null;

/** Path of the embedded default index (built on first use). */
export function defaultIndexPath(): Promise<string> {
  built ??= (async () => {
    const out = join(tmpdir(), `ipintel-default-${builderFingerprint()}.idx`);
    if (existsSync(out)) return out;
    await buildIndex({ sources: packageSources(), out, quiet: true });
    return out;
  })();
  return built;
}
