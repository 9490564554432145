/** A BuildSink that records every call, for parser tests. */
import type { BuildSink } from '../../index-builder/sink.ts';
import { SourceContext } from '../../index-builder/feed/source.ts';
import type { ManifestSource } from '../../index-builder/sink.ts';
import { resolve } from 'node:path';
import { wordsToBigInt } from '../../src/net/ip.ts';
import { SHARED_FEEDS_DIR } from './shared-feeds.ts';

export type SinkCall = { method: keyof BuildSink; args: unknown[] };

/** Records calls by method name. */
export class RecordingSink {
  readonly calls: SinkCall[] = [];
  /** Calls of one method, as argument arrays. */
  of(method: keyof BuildSink): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }
  /**
   * The sink itself (a Proxy that records any BuildSink method). IPv6 bounds
   * reported as words (the collector's fast path) are recorded as the `geo`
   * call they stand for, so tests read one form whichever path a parser takes.
   */
  readonly sink: BuildSink = new Proxy({} as BuildSink, {
    get: (_t, prop: string) =>
      prop === 'geo6Words'
        ? (start: Uint32Array, end: Uint32Array, value: unknown) => {
            this.calls.push({ method: 'geo', args: [6, wordsToBigInt(start, 0), wordsToBigInt(end, 0), value] });
          }
        : (...args: unknown[]) => {
            this.calls.push({ method: prop as keyof BuildSink, args });
          },
  });
}

/** Directory of the real feed snapshots (absent from a clone: see shared-feeds.ts). */
export const FEEDS_DIR = SHARED_FEEDS_DIR;

/** A SourceContext over a file (absolute, or relative to the real snapshots). */
export function sourceFor(path: string, options: Partial<ManifestSource> = {}): SourceContext {
  const abs = path.startsWith('/') ? path : resolve(FEEDS_DIR, path);
  return new SourceContext(abs, path, { type: options.type ?? 'test', path, ...options });
}
