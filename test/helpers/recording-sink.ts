/** A BuildSink that records every call, for parser tests. */
import type { BuildSink } from '../../index-builder/sink.ts';
import { SourceContext } from '../../index-builder/feed/source.ts';
import type { ManifestSource } from '../../index-builder/sink.ts';
import { resolve } from 'node:path';

export type SinkCall = { method: keyof BuildSink; args: unknown[] };

/** Records calls by method name. */
export class RecordingSink {
  readonly calls: SinkCall[] = [];
  /** Calls of one method, as argument arrays. */
  of(method: keyof BuildSink): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }
  /** The sink itself (a Proxy that records any BuildSink method). */
  readonly sink: BuildSink = new Proxy({} as BuildSink, {
    // The optional words form (geo6Words) is absent: parsers then report every range through geo().
    get: (_t, prop: string) =>
      prop === 'geo6Words'
        ? undefined
        : (...args: unknown[]) => {
            this.calls.push({ method: prop as keyof BuildSink, args });
          },
  });
}

/** Directory of the shared real feed snapshots. */
export const FEEDS_DIR = resolve(import.meta.dir, '../../../shared/feeds');

/** A SourceContext over a file (absolute, or relative to ../shared/feeds). */
export function sourceFor(path: string, options: Partial<ManifestSource> = {}): SourceContext {
  const abs = path.startsWith('/') ? path : resolve(FEEDS_DIR, path);
  return new SourceContext(abs, path, { type: options.type ?? 'test', path, ...options });
}
