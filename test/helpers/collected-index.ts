/** Writes a hand-filled Collector to an index in a temporary folder and opens it (for layout edge-case tests). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeCollected } from '../../index-builder/build.ts';
import type { Collector } from '../../index-builder/merge/collector.ts';
import { IndexReader } from '../../src/index/reader.ts';

/** The opened index and a function removing its folder. */
export function openCollected(c: Collector, name: string): { reader: IndexReader; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `ipintel-${name}-`));
  writeCollected(c, [], { out: join(dir, 'x.idx'), attributions: [] });
  return { reader: IndexReader.open(join(dir, 'x.idx')), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
