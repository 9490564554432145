/**
 * What a build reports when it is done, and the text tables it is printed
 * in. Kept apart from build.ts so that printing a summary (or any table)
 * does not load the builder itself.
 */
import type { IndexMeta, SourceMeta } from '../src/index/format.ts';
import type { MergedIndex } from './merge/sweep.ts';

/** What one build wrote, read and left out, for the summary table and the callers' logs. */
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
  /** Set when the build kept a previous index's ids: the garbage the file carries (IndexMeta.deadIds). */
  deadIds?: IndexMeta['deadIds'];
}

/** Renders rows as an aligned text table. */
export function formatTable(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, c) => Math.max(...cells.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) => r.map((v, c) => (c === 0 ? v.padEnd(widths[c]) : v.padStart(widths[c]))).join('  ');
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
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
      [
        'ids',
        s.deadIds
          ? `kept from the index built ${s.deadIds.previousBuiltAt}; dead: ${s.deadIds.records} records, ${s.deadIds.subTableRows} table rows, ${s.deadIds.strings} strings`
          : 'numbered afresh',
      ],
    ],
  );
  const skipped = s.skippedSamples.length
    ? '\nskipped lines (first of each source):\n' + s.skippedSamples.map((x) => `  ${x.path}:${x.line}: ${x.reason}`).join('\n')
    : '';
  return `${sourceTable}\n\n${totals}${skipped}`;
}
