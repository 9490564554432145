/**
 * One index build: parse every source into the collector, sweep, encode,
 * write atomically after verifying the written file, and summarise.
 */
import { statSync } from 'node:fs';
import { FORMAT_VERSION, RecordCol, Section, TableLayout, V4_DIRECT_BITS, V4_L1_BITS, V6_L1_BITS, type IndexMeta, type SourceMeta } from '../src/index/format.ts';
import { IndexReader } from '../src/index/reader.ts';
import { EVIDENCE_KINDS, kindsOfSource } from '../src/index/evidence-kinds.ts';
import { addBuiltins } from './builtins.ts';
import { attributionsFor } from './default-sources.ts';
import { SourceContext } from './feed/source.ts';
import type { ResolvedSource } from './manifest.ts';
import { Collector } from './merge/collector.ts';
import { sweep, type FamilyIntervals, type MergedIndex } from './merge/sweep.ts';
import { PARSERS } from './parsers/index.ts';
import { peakRssBytes } from './peak-memory.ts';
import { createProgress } from './progress.ts';
import type { BuildSummary } from './summary.ts';
import { encodeGeoRows, encodeL1, encodeRecords, encodeV4Direct, encodeV6Direct, SUB_TABLE_COUNT, subTableEncoders } from './write/tables.ts';
import { bytesOf, IndexFileWriter } from './write/index-file-writer.ts';
import { verifySectionChecksums } from './write/verify-file.ts';
import { PreviousIndex } from './write/previous-index.ts';
import { assignRecordIds, placeRecords, placeSubTables } from './write/stable-tables.ts';
import { StringPool } from './merge/string-pool.ts';
import { SpilledIntervals } from './write/spilled-intervals.ts';

export interface BuildOptions {
  sources: ResolvedSource[];
  out: string;
  quiet?: boolean;
  /** Fixed build time (tests and reproducible builds); default now. */
  builtAtMs?: number;
  /** Marks the file as the server's own (IndexMeta.managedBy): its feed refresher may replace it. */
  managedBy?: 'server';
  /**
   * The index this build follows (the one served or published now): equal
   * strings, rows and records keep its ids (stable ids, FORMAT.md). One that
   * cannot be used is ignored with one log line and ids are numbered afresh.
   */
  previous?: string;
  /** Where that log line goes (default: standard error). */
  log?: (line: string) => void;
}


/** SHA-256 of a file, streamed. */
async function sha256File(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256');
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk);
  return hasher.digest('hex');
}

/** Sources from this size (or this many rows: a small gzip can hold a large file) on are followed by a full collection. */
const LARGE_SOURCE_BYTES = 4 * 1024 * 1024;
const LARGE_SOURCE_ROWS = 100_000;

/** Parses every source into a collector (with the built-in IANA tables). */
export async function collectSources(
  sources: ResolvedSource[],
  progress = createProgress(true),
): Promise<{ collector: Collector; metas: SourceMeta[]; samples: BuildSummary['skippedSamples'] }> {
  const collector = new Collector();
  addBuiltins(collector);
  const metas: SourceMeta[] = [];
  const samples: BuildSummary['skippedSamples'] = [];
  for (let i = 0; i < sources.length; i++) {
    const src = sources[i];
    progress.source(i, `${src.options.type} ${src.displayPath}`);
    const t0 = performance.now();
    const mod = await PARSERS[src.options.type]();
    const ctx = new SourceContext(src.absPath, src.displayPath, src.options);
    collector.beginSource(src.options);
    await mod.parse(ctx, collector);
    if (ctx.rows === 0) ctx.fail('no usable rows: is this the right file for type ' + src.options.type + '?');
    const date = ctx.date;
    if (date.from !== 'mtime') collector.dateSource(date.at);
    metas.push({
      type: src.options.type,
      path: src.displayPath,
      rows: ctx.rows,
      skipped: ctx.skipped,
      bytes: statSync(src.absPath).size,
      sha256: await sha256File(src.absPath),
      seconds: Math.round((performance.now() - t0) / 10) / 100,
      date: date.at,
      dateFrom: date.from,
      kinds: kindsOfSource(src.options.type, src.options.category),
    });
    for (const s of ctx.skipSamples) samples.push({ path: src.displayPath, line: s.line, reason: s.reason });
    // A large source leaves its file and parsing garbage behind; collected now, the next one does not pile onto it.
    if (metas[metas.length - 1].bytes >= LARGE_SOURCE_BYTES || ctx.rows >= LARGE_SOURCE_ROWS) {
      // After a turn of the event loop: collected at once, the parse's last stack frames kept its garbage alive.
      await Bun.sleep(0);
      Bun.gc(true);
    }
  }
  return { collector, metas, samples };
}

/** Builds an index file from sources; resolves when the file is written and verified. */
export async function buildIndex(options: BuildOptions): Promise<BuildSummary> {
  const t0 = performance.now();
  const progress = createProgress(options.quiet);
  // Verified before the sources are parsed, while the build holds little memory.
  const previous = options.previous === undefined ? null : PreviousIndex.open(options.previous, options.log ?? ((line) => console.error(line)));
  progress.start(options.sources.length + 3);
  try {
    const { collector, metas, samples } = await collectSources(options.sources, progress);
    const written = writeCollected(collector, metas, {
      out: options.out,
      attributions: attributionsFor(options.sources),
      builtAtMs: options.builtAtMs,
      managedBy: options.managedBy,
      previous,
      progress,
      step: options.sources.length,
    });
    progress.stop();
    return {
      ...written,
      out: options.out,
      sources: metas,
      seconds: Math.round((performance.now() - t0) / 100) / 10,
      peakRssBytes: peakRssBytes(),
      skippedSamples: samples,
    };
  } finally {
    previous?.close();
  }
}


type WriteOptions = {
  out: string;
  attributions: string[];
  builtAtMs?: number;
  managedBy?: 'server';
  /** The previous index whose ids the file keeps (null or absent: ids numbered afresh). */
  previous?: PreviousIndex | null;
  progress?: ReturnType<typeof createProgress>;
  step?: number;
};
type WriteResult = { v4Intervals: number; v6Intervals: number; records: number; bytes: number; bogonsYielded: MergedIndex['bogonsYielded']; deadIds?: IndexMeta['deadIds'] };

/** Sections of the file besides the sub-tables: intervals of both families, records, strings, META. */
const FIXED_SECTIONS = 13;

/**
 * Merges a filled collector and writes the index (atomically, verified).
 * Each section is written as soon as it is encoded and then let go, and so
 * is each part of the merge once its sections are out: the build's peak is
 * the sweep's working set, not the file. Consumes the collector.
 */
export function writeCollected(collector: Collector, metas: SourceMeta[], opts: WriteOptions): WriteResult {
  const progress = opts.progress ?? createProgress(true);
  const step = opts.step ?? 0;
  const builtAtMs = opts.builtAtMs ?? Date.now();
  // The overrides of an `overrides` source travel as their own section (src/lookup/overrides).
  const overrides = collector.overrideLines.length > 0 ? new TextEncoder().encode(`${collector.overrideLines.join('\n')}\n`) : null;
  const hasRpki = collector.vrps.length > 0;
  const file = new IndexFileWriter(opts.out, FIXED_SECTIONS + SUB_TABLE_COUNT + (overrides ? 1 : 0));
  // Following a previous index, each family's intervals wait on disk for the record ids (known only after every record is).
  const waiting = opts.previous ? new SpilledIntervals(opts.out) : null;
  try {
    progress.source(step, 'merging layers');
    const previous = opts.previous ?? null;
    // Each family's interval sections go out as soon as it is swept: the next family's sweep does not hold them.
    const merged = sweep(
      collector,
      (p) => progress.phase(p),
      (iv) => {
        if (waiting) return void waiting.park(iv);
        progress.phase(`interval tables IPv${iv.family}`);
        writeIntervals(file, iv);
      },
    );
    const result: WriteResult = { v4Intervals: merged.v4.count, v6Intervals: merged.v6.count, records: merged.recordCount, bytes: 0, bogonsYielded: merged.bogonsYielded };

    progress.source(step + 1, 'encoding');
    // Following a previous index, strings keep its ids: the sweep interned only the crawler keys, so the
    // pool takes the previous table now (seeded before the sweep, it would add to the sweep's peak) and
    // the records' crawler column is renumbered into it.
    const crawlerIds = previous ? seedStrings(merged, previous) : null;
    const encoders = subTableEncoders(collector, merged);
    // The collector frees memory late on a machine with much RAM; a full collection
    // between the large steps keeps their garbage from adding up.
    Bun.gc(true);
    const tables: Record<string, number> = {};
    if (previous) {
      progress.phase('sub-tables at the previous ids');
      const placed = placeSubTables(encoders, previous);
      placed.columnIds.set(RecordCol.CRAWLER, crawlerIds!);
      const geo = encodeGeoRows(collector, merged.strings);
      collector.release();
      progress.phase('records at the previous ids');
      const ids = assignRecordIds(merged.records, merged.recordCount, geo, placed.columnIds, previous);
      Bun.gc(true);
      const buckets = { bucketWords: 0, deadBucketWords: 0 };
      for (const iv of waiting!.families()) {
        progress.phase(`interval tables IPv${iv.family}`);
        for (let i = 0; i < iv.count; i++) iv.recs[i] = ids.ids[iv.recs[i]];
        const written = writeIntervals(file, iv, previous);
        buckets.bucketWords += written.bucketWords;
        buckets.deadBucketWords += written.deadBucketWords;
      }
      for (const [tag, words] of placed.sections.splice(0)) {
        tables[tag] = words.length;
        file.add(tag, bytesOf(words));
      }
      Bun.gc(true);
      progress.phase('records');
      file.add(Section.RECORDS, bytesOf(placeRecords(merged.records, merged.recordCount, geo, placed.columnIds, ids, previous)));
      const deadStrings = merged.strings.deadSeeded();
      result.records = ids.count;
      result.deadIds = {
        previousBuiltAt: previous.meta.builtAt,
        records: ids.dead,
        subTableRows: placed.deadRows,
        subTableRowsTotal: placed.totalRows,
        strings: deadStrings.strings,
        stringBytes: deadStrings.bytes,
        stringTableBytes: merged.strings.encoded().bytes.length,
        v4BucketWords: buckets.deadBucketWords,
        v4BucketWordsTotal: buckets.bucketWords,
      };
    } else {
      for (const [tag, encode] of encoders) {
        progress.phase(`sub-table ${tag}`);
        const u32 = encode();
        tables[tag] = u32.length;
        file.add(tag, bytesOf(u32));
      }
      Bun.gc(true);
      progress.phase('records');
      // Geo strings are interned after the sub-tables' and before the string table is encoded.
      file.add(Section.RECORDS, bytesOf(encodeRecords(merged.records, merged.recordCount, encodeGeoRows(collector, merged.strings))));
    }
    merged.records = new Uint32Array(0);
    if (overrides) file.add(Section.OVERRIDES, overrides);
    collector.release();
    Bun.gc(true);
    progress.phase('strings');
    const encodedStrings = merged.strings.encoded();
    file.add(Section.STRING_OFFSETS, bytesOf(encodedStrings.offsets));
    file.add(Section.STRING_BYTES, encodedStrings.bytes);

    progress.source(step + 2, 'writing');
    const held = new Set(metas.flatMap((m) => m.kinds ?? []));
    // The built-in IANA registries give every address its registry-level allocation.
    held.add('allocation');
    if (!hasRpki) held.delete('rpki');
    const meta: IndexMeta = {
      formatVersion: FORMAT_VERSION,
      builtAt: new Date(builtAtMs).toISOString(),
      builder: 'ipintel index-builder',
      sources: metas,
      counts: {
        v4Intervals: result.v4Intervals,
        v6Intervals: result.v6Intervals,
        records: result.records,
        strings: merged.strings.count,
        tables,
        asnDetails: tables.ASND / TableLayout.ASND.length,
      },
      hasRpki,
      capabilities: Object.fromEntries(EVIDENCE_KINDS.map((k) => [k, held.has(k)])),
      bogonsYielded: merged.bogonsYielded,
      routedFamilies: merged.routedFamilies,
      attributions: opts.attributions,
      ...(opts.managedBy ? { managedBy: opts.managedBy } : {}),
      ...(result.deadIds ? { deadIds: result.deadIds } : {}),
    };
    // What the encoders left is garbage now: collected before the check reads the file back.
    Bun.gc(true);
    const bytes = file.finish(meta, builtAtMs, (tmp) => {
      // Verify what reached the disk before it replaces anything: every section's
      // checksum read back a section at a time, then the layout as the server opens it.
      verifySectionChecksums(tmp);
      const counts = IndexReader.open(tmp, { verifyChecksums: false }).intervalCounts;
      if (counts.v4 !== result.v4Intervals || counts.v6 !== result.v6Intervals) {
        throw new Error(`verification of ${tmp} failed: interval counts differ from the build`);
      }
    });
    return { ...result, bytes };
  } catch (e) {
    file.abort();
    throw e;
  } finally {
    waiting?.dispose();
  }
}

/** Replaces the merged index's string pool by one seeded with the previous index's table; returns the new id of each old string. */
function seedStrings(merged: MergedIndex, previous: PreviousIndex): Uint32Array {
  const strings = new StringPool();
  strings.seed(previous.u32(Section.STRING_OFFSETS), previous.bytes(Section.STRING_BYTES));
  const ids = new Uint32Array(merged.strings.count);
  for (let id = 1; id < ids.length; id++) ids[id] = strings.id(merged.strings.text(id));
  merged.strings = strings;
  return ids;
}

/**
 * Writes one family's interval sections (its arrays are the caller's to let
 * go); following a previous index, IPv4 buckets stay where they were.
 * Returns the IPv4 bucket words, and those no bucket uses (0 for IPv6).
 */
function writeIntervals(file: IndexFileWriter, iv: FamilyIntervals, previous?: PreviousIndex | null): { bucketWords: number; deadBucketWords: number } {
  if (iv.family === 4) {
    file.add(Section.V4_STARTS, bytesOf(iv.startWords));
    file.add(Section.V4_L1, bytesOf(encodeL1(iv, V4_L1_BITS)));
    const before = previous ? { direct: previous.u32(Section.V4_DIRECT), buckets: previous.u32(Section.V4_BUCKETS) } : undefined;
    const v4Direct = encodeV4Direct(iv, before?.direct.length === 2 ** V4_DIRECT_BITS ? before : undefined);
    file.add(Section.V4_DIRECT, bytesOf(v4Direct.direct));
    file.add(Section.V4_BUCKETS, bytesOf(v4Direct.buckets));
    // Dead words of the previous file stay dead: no /24 of it pointed there.
    return { bucketWords: v4Direct.buckets.length, deadBucketWords: v4Direct.deadWords + (previous?.meta.deadIds?.v4BucketWords ?? 0) };
  }
  file.add(Section.V6_STARTS, bytesOf(iv.startWords));
  file.add(Section.V6_RECORDS, bytesOf(iv.recs));
  file.add(Section.V6_L1, bytesOf(encodeL1(iv, V6_L1_BITS)));
  const v6Direct = encodeV6Direct(iv);
  file.add(Section.V6_HASH, bytesOf(v6Direct.hash));
  file.add(Section.V6_SUB, bytesOf(v6Direct.nodes));
  return { bucketWords: 0, deadBucketWords: 0 };
}
