/**
 * One index build: parse every source into the collector, sweep, encode,
 * write atomically after verifying the written file, and summarise.
 */
import { statSync } from 'node:fs';
import { FORMAT_VERSION, Section, TableLayout, V4_L1_BITS, V6_L1_BITS, type IndexMeta, type SourceMeta } from '../src/index/format.ts';
import { IndexReader } from '../src/index/reader.ts';
import { EVIDENCE_KINDS, kindsOfSource } from '../src/index/evidence-kinds.ts';
import { addBuiltins } from './builtins.ts';
import { attributionsFor } from './default-sources.ts';
import { SourceContext } from './feed/source.ts';
import type { ResolvedSource } from './manifest.ts';
import { Collector } from './merge/collector.ts';
import { sweep, type MergedIndex } from './merge/sweep.ts';
import { PARSERS } from './parsers/index.ts';
import { peakRssBytes } from './peak-memory.ts';
import { createProgress, formatTable } from './progress.ts';
import { encodeGeoRows, encodeL1, encodeRecords, encodeSubTables, encodeV4Direct, encodeV6Direct } from './write/tables.ts';
import { bytesOf, encodeStrings, writeIndexFile, type SectionData } from './write/index-file.ts';

export interface BuildOptions {
  sources: ResolvedSource[];
  out: string;
  quiet?: boolean;
  /** Fixed build time (tests and reproducible builds); default now. */
  builtAtMs?: number;
  /** Marks the file as the server's own (IndexMeta.managedBy): its feed refresher may replace it. */
  managedBy?: 'server';
}

export interface BuildSummary {
  out: string;
  sources: SourceMeta[];
  v4Intervals: number;
  v6Intervals: number;
  records: number;
  bytes: number;
  seconds: number;
  /** The build process's peak resident memory so far, in bytes (what a host must have free for a build). */
  peakRssBytes: number;
  /** Bogon claims that yielded to newer registry allocations (IndexMeta.bogonsYielded). */
  bogonsYielded: MergedIndex['bogonsYielded'];
  skippedSamples: { path: string; line: number; reason: string }[];
}

/** SHA-256 of a file, streamed. */
async function sha256File(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256');
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk);
  return hasher.digest('hex');
}

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
  }
  return { collector, metas, samples };
}

/** Builds an index file from sources; resolves when the file is written and verified. */
export async function buildIndex(options: BuildOptions): Promise<BuildSummary> {
  const t0 = performance.now();
  const progress = createProgress(options.quiet);
  progress.start(options.sources.length + 3);
  const { collector, metas, samples } = await collectSources(options.sources, progress);
  const written = writeCollected(collector, metas, {
    out: options.out,
    attributions: attributionsFor(options.sources),
    builtAtMs: options.builtAtMs,
    managedBy: options.managedBy,
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
}

type WriteOptions = { out: string; attributions: string[]; builtAtMs?: number; managedBy?: 'server'; progress?: ReturnType<typeof createProgress>; step?: number };
type WriteResult = { v4Intervals: number; v6Intervals: number; records: number; bytes: number; bogonsYielded: MergedIndex['bogonsYielded'] };

/**
 * Merges a filled collector and writes the index (atomically, verified).
 * Consumes the collector: its values are let go before the file is written,
 * so the build's peak is not the merge's working set plus the file.
 */
export function writeCollected(collector: Collector, metas: SourceMeta[], opts: WriteOptions): WriteResult {
  const progress = opts.progress ?? createProgress(true);
  const step = opts.step ?? 0;
  const builtAtMs = opts.builtAtMs ?? Date.now();
  const { sections, meta, result } = encodeCollected(collector, metas, opts, builtAtMs, progress, step);
  collector.release();
  Bun.gc(true);

  progress.source(step + 2, 'writing');
  const bytes = writeIndexFile(opts.out, meta, sections, builtAtMs, (tmp) => {
    // Verify what reached the disk before it replaces anything.
    const counts = IndexReader.open(tmp).intervalCounts;
    if (counts.v4 !== result.v4Intervals || counts.v6 !== result.v6Intervals) {
      throw new Error(`verification of ${tmp} failed: interval counts differ from the build`);
    }
  });
  return { ...result, bytes };
}

/** The merge and the encoding: the file's sections and META, with the counts the summary reports. */
function encodeCollected(
  collector: Collector,
  metas: SourceMeta[],
  opts: WriteOptions,
  builtAtMs: number,
  progress: ReturnType<typeof createProgress>,
  step: number,
): { sections: SectionData[]; meta: IndexMeta; result: Omit<WriteResult, 'bytes'> } {
  progress.source(step, 'merging layers');
  const merged = sweep(collector, (p) => progress.phase(p));

  progress.source(step + 1, 'encoding');
  const tables = encodeSubTables(collector, merged);
  // Geo strings are interned before the string table is encoded.
  const records = encodeRecords(merged.records, merged.recordCount, encodeGeoRows(collector, merged.strings));
  const strings = encodeStrings(merged.strings);
  const v4Direct = encodeV4Direct(merged.v4);
  const v6Direct = encodeV6Direct(merged.v6);
  const sections: SectionData[] = [
    { tag: Section.STRING_OFFSETS, bytes: bytesOf(strings.offsets) },
    { tag: Section.STRING_BYTES, bytes: strings.bytes },
    { tag: Section.V4_STARTS, bytes: bytesOf(merged.v4.startWords) },
    { tag: Section.V4_L1, bytes: bytesOf(encodeL1(merged.v4, V4_L1_BITS)) },
    { tag: Section.V4_DIRECT, bytes: bytesOf(v4Direct.direct) },
    { tag: Section.V4_BUCKETS, bytes: bytesOf(v4Direct.buckets) },
    { tag: Section.V6_STARTS, bytes: bytesOf(merged.v6.startWords) },
    { tag: Section.V6_RECORDS, bytes: bytesOf(merged.v6.recs) },
    { tag: Section.V6_L1, bytes: bytesOf(encodeL1(merged.v6, V6_L1_BITS)) },
    { tag: Section.V6_HASH, bytes: bytesOf(v6Direct.hash) },
    { tag: Section.V6_SUB, bytes: bytesOf(v6Direct.nodes) },
    { tag: Section.RECORDS, bytes: bytesOf(records) },
    ...Object.entries(tables).map(([tag, u32]) => ({ tag, bytes: bytesOf(u32) })),
  ];
  if (collector.overrideLines.length > 0) sections.push({ tag: Section.OVERRIDES, bytes: new TextEncoder().encode(`${collector.overrideLines.join('\n')}\n`) });

  const held = new Set(metas.flatMap((m) => m.kinds ?? []));
  // The built-in IANA registries give every address its registry-level allocation.
  held.add('allocation');
  if (collector.vrps.length === 0) held.delete('rpki');
  const meta: IndexMeta = {
    formatVersion: FORMAT_VERSION,
    builtAt: new Date(builtAtMs).toISOString(),
    builder: 'ipintel index-builder',
    sources: metas,
    counts: {
      v4Intervals: merged.v4.count,
      v6Intervals: merged.v6.count,
      records: merged.recordCount,
      strings: merged.strings.strings.length,
      tables: Object.fromEntries(Object.entries(tables).map(([tag, u32]) => [tag, u32.length])),
      asnDetails: tables.ASND.length / TableLayout.ASND.length,
    },
    hasRpki: collector.vrps.length > 0,
    capabilities: Object.fromEntries(EVIDENCE_KINDS.map((k) => [k, held.has(k)])),
    bogonsYielded: merged.bogonsYielded,
    routedFamilies: merged.routedFamilies,
    attributions: opts.attributions,
    ...(opts.managedBy ? { managedBy: opts.managedBy } : {}),
  };
  const result = { v4Intervals: merged.v4.count, v6Intervals: merged.v6.count, records: merged.recordCount, bogonsYielded: merged.bogonsYielded };
  return { sections, meta, result };
}

/** The human summary printed at the end of a build. */
export function formatSummary(s: BuildSummary): string {
  const sourceTable = formatTable(
    ['source', 'type', 'rows', 'skipped', 'seconds'],
    s.sources.map((m) => [m.path, m.type, m.rows, m.skipped, m.seconds.toFixed(2)]),
  );
  const totals = formatTable(
    ['index', 'value'],
    [
      ['file', s.out],
      ['sources', s.sources.length],
      ['rows', s.sources.reduce((a, m) => a + m.rows, 0)],
      ['skipped lines', s.sources.reduce((a, m) => a + m.skipped, 0)],
      ['IPv4 intervals', s.v4Intervals],
      ['IPv6 intervals', s.v6Intervals],
      ['records', s.records],
      ['bogon addresses yielded to newer allocations', `IPv4 ${s.bogonsYielded.v4.addresses}, IPv6 ${s.bogonsYielded.v6.addresses}`],
      ['file size', `${(s.bytes / 1048576).toFixed(1)} MiB`],
      ['seconds', s.seconds.toFixed(1)],
      ['peak memory (RSS)', `${(s.peakRssBytes / 1048576).toFixed(0)} MiB`],
    ],
  );
  const skipped = s.skippedSamples.length
    ? '\nskipped lines (first of each source):\n' + s.skippedSamples.map((x) => `  ${x.path}:${x.line}: ${x.reason}`).join('\n')
    : '';
  return `${sourceTable}\n\n${totals}${skipped}`;
}
