/**
 * The publisher's own figures for what it publishes now (full, compressed and
 * each delta's bytes), read from the manifest in its folder at each status
 * answer or scrape (re-read only when the manifest changed), for
 * /v1/data/status and /metrics on a publisher.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { PublishedManifest } from './signed-manifest.ts';

/** What one published version costs a puller, by way. */
export interface PublishFigures {
  file: string;
  built_at: string;
  sha256: string;
  full_bytes: number;
  /** null: no compressed copy (it could not be made). */
  compressed_bytes: number | null;
  /** One per earlier version a delta starts from. */
  deltas: { from_sha256: string; bytes: number }[];
}

let cached: { path: string; mtimeMs: number; figures: PublishFigures | null } | null = null;

/** The figures of the manifest published in `dir`; null when there is none (or it cannot be read). */
export function readPublishFigures(dir: string): PublishFigures | null {
  const path = join(dir, 'ipintel.idx.json');
  let mtimeMs: number;
  try {
    mtimeMs = statSync(path).mtimeMs;
  } catch {
    return null;
  }
  if (cached?.path === path && cached.mtimeMs === mtimeMs) return cached.figures;
  let figures: PublishFigures | null = null;
  try {
    const m = JSON.parse(readFileSync(path, 'utf8')) as PublishedManifest;
    figures = {
      file: m.file,
      built_at: m.built_at,
      sha256: m.sha256,
      full_bytes: m.size,
      compressed_bytes: m.compressed?.size ?? null,
      deltas: (m.deltas ?? []).map((d) => ({ from_sha256: d.from_sha256, bytes: d.size })),
    };
  } catch {}
  cached = { path, mtimeMs, figures };
  return figures;
}

/** Registers `ipintel_publish_bytes{way, from}`: the published version's bytes by way of pulling it (read at each scrape). */
export function registerPublishMetrics({ Gauge }: typeof import('prom-client'), registry: Registry, figures: () => PublishFigures | null): void {
  new Gauge({
    name: 'ipintel_publish_bytes',
    help: 'Bytes of the published version by way of pulling it: full, compressed, and delta (from: the first 12 hex of the version it starts from)',
    labelNames: ['way', 'from'],
    registers: [registry],
    aggregator: 'max',
    collect() {
      this.reset();
      const f = figures();
      if (!f) return;
      this.set({ way: 'full', from: '' }, f.full_bytes);
      if (f.compressed_bytes !== null) this.set({ way: 'compressed', from: '' }, f.compressed_bytes);
      for (const d of f.deltas) this.set({ way: 'delta', from: d.from_sha256.slice(0, 12) }, d.bytes);
    },
  });
}
