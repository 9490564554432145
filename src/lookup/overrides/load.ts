/**
 * One read of the overrides file, start to end: the regular file only,
 * bounded (src/file-io/read-regular-file.ts), parsed into columns, built into a
 * table in shared memory, measured against the memory budget's share for
 * overrides and refused with the reason when it would not fit. Runs on a
 * thread of its own (load-thread.ts), never on a serving thread; the CLI
 * tools call it directly.
 */
import { MAX_OVERRIDE_FILE_BYTES, OverridesFileError, readOverridesText, type OverrideLineError } from '../../contract/overrides.ts';
import { readRegularFile } from '../../file-io/read-regular-file.ts';
import { OverrideColumns, OverrideTable, type OverrideTableParts } from './table.ts';

/** Bytes an entry costs in the table at the least (its columns and one interval; memory-budget.ts ENTRY_BYTES.overrideEntry), to refuse a file while it is read. */
const MIN_ENTRY_BYTES = 38;
/** Entries from which a load collects its parse's garbage before building. */
const LARGE_LOAD = 100_000;

/** Bounds of a read. */
export interface OverridesLimits {
  maxFileBytes: number;
  /** What the table may hold (the memory budget's share for overrides, src/memory-budget.ts). */
  maxTableBytes: number;
}

/** The address space a table covers: the union of its prefixes. */
export interface OverridesCoverage {
  ipv4Addresses: number;
  /** Shares of each family's space, 0..1. */
  ipv4Share: number;
  ipv6Share: number;
}

/** What a read did, apart from the table it made. */
export interface OverridesReadReport {
  path: string;
  /** The file was applied (false: refused, the previous overrides stay). */
  applied: boolean;
  entries: number;
  /** Lines skipped (bad); their first messages are in `errors`. */
  badLines: number;
  errors: OverrideLineError[];
  /** Why the file was refused, when it was. */
  refused: string | null;
  /** The space the applied table covers (null when refused). */
  covers: OverridesCoverage | null;
  /** Bytes the applied table holds (0 when refused). */
  tableBytes: number;
}

/** A read: its report, and the table's memory when applied. */
export interface OverridesRead {
  report: OverridesReadReport;
  parts: OverrideTableParts | null;
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

/** Reads, parses and builds the file at `path`; never throws (a refusal is a report). */
export function readOverridesFile(path: string, limits: OverridesLimits): OverridesRead {
  const refused = (why: string): OverridesRead => ({ report: { path, applied: false, entries: 0, badLines: 0, errors: [], refused: why, covers: null, tableBytes: 0 }, parts: null });
  try {
    // Entries go into columns as they are read: no object per line is kept.
    const columns = new OverrideColumns();
    const over = (need: string) => `would hold ${need}, over the ${mib(limits.maxTableBytes)} the memory budget gives the overrides (IPINTEL_MEMORY_MB; docs/deployment.md, "Memory")`;
    const text = new TextDecoder().decode(readRegularFile(path, Math.min(limits.maxFileBytes, MAX_OVERRIDE_FILE_BYTES)));
    const parsed = readOverridesText(text, path, (e) => {
      columns.add(e);
      // Refused as soon as the entries read so far would not fit: the parse's own peak stays near the budget too.
      if (columns.count * MIN_ENTRY_BYTES + columns.textChars > limits.maxTableBytes) throw new OverridesFileError(path, over(`more than ${mib(limits.maxTableBytes)} by line ${e.line}`));
    });
    // The parse's garbage goes before the build makes its own: the peak is the larger, not the sum.
    if (columns.count >= LARGE_LOAD) Bun.gc(true);
    const { table, replaced } = OverrideTable.fromColumns(columns);
    if (table.byteLength > limits.maxTableBytes) return refused(`${path}: ${over(mib(table.byteLength))}`);
    const errors = parsed.errors.concat(replaced.slice(0, Math.max(0, 100 - parsed.errors.length)).map((r) => ({ line: r.line, message: `the same prefix again on line ${r.by}, which wins` })));
    const { v4, v6 } = table.coverage;
    const covers = { ipv4Addresses: v4, ipv4Share: v4 / 2 ** 32, ipv6Share: Number(v6) / 2 ** 128 };
    return { report: { path, applied: true, entries: table.size, badLines: parsed.badLines, errors, refused: null, covers, tableBytes: table.byteLength }, parts: table.toParts() };
  } catch (e) {
    if (e instanceof OverridesFileError) return refused(e.message);
    return refused(`${path}: ${(e as Error).message}`);
  }
}

/** The log line's words for what a table covers. */
export function coverageText(c: OverridesCoverage): string {
  const pct = (share: number) => (share === 0 ? '0' : share >= 0.001 ? (share * 100).toPrecision(3) : (share * 100).toExponential(2));
  return `covering ${c.ipv4Addresses} IPv4 addresses (${pct(c.ipv4Share)}% of the IPv4 space) and ${pct(c.ipv6Share)}% of the IPv6 space`;
}
