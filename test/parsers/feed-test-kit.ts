/** Shared steps of parser tests: run a parser on a file, find calls by CIDR, write temp feeds. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'bun:test';
import type { FeedParser, SourceContext } from '../../index-builder/feed/source.ts';
import type { BuildSink, ManifestSource } from '../../index-builder/sink.ts';
import { parseCidr } from '../../src/net/ip.ts';
import { RecordingSink, sourceFor } from '../helpers/recording-sink.ts';

/** A finished parser run. */
export interface Run {
  rec: RecordingSink;
  ctx: SourceContext;
}

/** Runs `parse` over a feed file (relative to shared/feeds, or absolute). */
export async function runParser(parse: FeedParser, path: string, options: Partial<ManifestSource> = {}): Promise<Run> {
  const rec = new RecordingSink();
  const ctx = sourceFor(path, options);
  await parse(ctx, rec.sink);
  return { rec, ctx };
}

/** Arguments after (family, start, end) of every `method` call covering exactly `cidr`. */
export function valuesAt(rec: RecordingSink, method: keyof BuildSink, cidr: string): unknown[][] {
  const want = parseCidr(cidr);
  if (!want) throw new Error(`bad CIDR in test: ${cidr}`);
  return rec
    .of(method)
    .filter(([family, start, end]) => family === want.family && start === want.start && end === want.end)
    .map((args) => args.slice(3));
}

/** The single value reported by `method` for exactly `cidr` (fails the test otherwise). */
export function valueAt(rec: RecordingSink, method: keyof BuildSink, cidr: string): unknown {
  const found = valuesAt(rec, method, cidr);
  expect(found.length).toBe(1);
  return found[0][0];
}

/** Writes a feed file into a fresh temp directory and returns its absolute path. */
export function tempFeed(name: string, content: string | Uint8Array): string {
  const dir = mkdtempSync(join(tmpdir(), 'ipintel-parser-'));
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** Skipped line numbers of a run, in order. */
export function skippedLines(ctx: SourceContext): number[] {
  return ctx.skipSamples.map((s) => s.line);
}
