/**
 * Exports an index as a MaxMind DB: each record's value is what the API
 * answers for it (geoip-record.ts, through the v1 builder), the operator's
 * overrides laid over the index as a lookup applies them. The MMDB file
 * itself (search tree, data section, metadata, the atomic write) is the
 * builder's (index-builder/index.ts: its MaxMind DB writer).
 */
import { IndexReader } from '../../index/reader.ts';
import { coverageOf } from '../../index/coverage.ts';
import { wordsToBigInt } from '../../net/ip.ts';
import { embeddedOverrides } from '../../lookup/overrides/embedded.ts';
import type { OverridesHolder } from '../../lookup/overrides/holder.ts';
import { overlayRecord } from '../../lookup/overrides/overlay.ts';
import type { OverrideTable } from '../../lookup/overrides/table.ts';
import type { V1Context } from '../../lookup/v1.ts';
import { DEFAULT_POLICY } from '../../scoring/index.ts';
import { MmdbDataWriter, NO_DATA, writeMmdb, type Ranges } from '../../../index-builder/index.ts';
import { mmdbRecord } from './geoip-record.ts';

export { MMDB_DATABASE_TYPE } from '../../../index-builder/index.ts';

/** What was written. */
export interface MmdbExportSummary {
  path: string;
  sizeBytes: number;
  nodeCount: number;
  recordSize: number;
  /** Distinct values in the data section. */
  values: number;
}

/** Record id -> data offset, computed once per record (-2: not yet); and per (record, override) pair. */
class RecordValues {
  private readonly offsets: Int32Array;
  private readonly overridden = new Map<string, number>();
  readonly data = new MmdbDataWriter();
  values = 0;

  constructor(
    private readonly reader: IndexReader,
    private readonly ctx: V1Context,
    private readonly overrides: OverrideTable,
  ) {
    this.offsets = new Int32Array(reader.meta.counts.records).fill(-2);
  }

  offsetOf(recordId: number): number {
    let at = this.offsets[recordId];
    if (at !== -2) return at;
    at = this.write(mmdbRecord(this.reader.record(recordId), this.ctx));
    this.offsets[recordId] = at;
    return at;
  }

  /** The data offset of a record under override entry `entry` (the same record the lookup pipeline answers from). */
  overriddenOffsetOf(recordId: number, entry: number): number {
    const key = `${recordId}:${entry}`;
    let at = this.overridden.get(key);
    if (at === undefined) {
      at = this.write(mmdbRecord(overlayRecord(this.reader.record(recordId), this.overrides.match(entry)), this.ctx));
      this.overridden.set(key, at);
    }
    return at;
  }

  private write(value: ReturnType<typeof mmdbRecord>): number {
    if (value === null) return NO_DATA;
    const before = this.data.size;
    const at = this.data.write(value);
    if (this.data.size > before) this.values++;
    return at;
  }
}

/** One family's intervals as ranges with data offsets, neighbours with the same offset merged. */
function rangesOf(reader: IndexReader, family: 4 | 6, values: RecordValues, overrides: OverrideTable): Ranges {
  if (overrides.intervals(family).entries.length > 0) return overriddenRangesOf(reader, family, values, overrides);
  const { starts, recordIds } = reader.intervals(family);
  const words = family === 4 ? 1 : 4;
  const outStarts: number[] = [];
  const outData: number[] = [];
  // An index's intervals cover the whole space from its first address; this guards a file that does not.
  if (recordIds.length === 0 || starts.subarray(0, words).some((w) => w !== 0)) {
    for (let w = 0; w < words; w++) outStarts.push(0);
    outData.push(NO_DATA);
  }
  for (let i = 0; i < recordIds.length; i++) {
    const at = values.offsetOf(recordIds[i]);
    if (outData.length > 0 && outData[outData.length - 1] === at) continue;
    for (let w = 0; w < words; w++) outStarts.push(starts[i * words + w]);
    outData.push(at);
  }
  return { starts: outStarts, data: outData };
}

/**
 * rangesOf with the overrides' intervals laid over the index's: one merged
 * sweep, a new range wherever either side starts one (bigint arithmetic:
 * this runs only when the family has overrides).
 */
function overriddenRangesOf(reader: IndexReader, family: 4 | 6, values: RecordValues, overrides: OverrideTable): Ranges {
  const { starts, recordIds } = reader.intervals(family);
  const ov = overrides.intervals(family);
  const words = family === 4 ? 1 : 4;
  const max = family === 4 ? 0xffffffffn : (1n << 128n) - 1n;
  const at = (a: Uint32Array, i: number): bigint => (words === 1 ? BigInt(a[i]) : wordsToBigInt(a, i));
  const n = recordIds.length;
  const m = ov.entries.length;
  const outStarts: number[] = [];
  const outData: number[] = [];
  const push = (start: bigint, data: number) => {
    if (outData.length > 0 && outData[outData.length - 1] === data) return;
    if (words === 1) outStarts.push(Number(start));
    else for (let k = 3; k >= 0; k--) outStarts.push(Number((start >> BigInt(32 * k)) & 0xffffffffn));
    outData.push(data);
  };
  let cur = 0n;
  let i = n > 0 && at(starts, 0) === 0n ? 0 : -1;
  let j = 0;
  for (;;) {
    const iEnd = i + 1 < n ? at(starts, i + 1) - 1n : max;
    while (j < m && at(ov.ends, j) < cur) j++;
    const inOverride = j < m && at(ov.starts, j) <= cur;
    const oBound = j >= m ? max : inOverride ? at(ov.ends, j) : at(ov.starts, j) - 1n;
    const end = iEnd < oBound ? iEnd : oBound;
    const record = i < 0 ? -1 : recordIds[i];
    push(cur, record < 0 ? NO_DATA : inOverride ? values.overriddenOffsetOf(record, ov.entries[j]) : values.offsetOf(record));
    if (end >= max) break;
    cur = end + 1n;
    if (cur > iEnd) i++;
  }
  return { starts: outStarts, data: outData };
}

/**
 * Writes `reader`'s index as a MaxMind DB at `path`. Classification and
 * score are the API's for an anonymous caller at `nowMs` (coverage and
 * staleness as of then; no crawler proof); the build epoch is the index's.
 */
export function exportMmdb(reader: IndexReader, path: string, nowMs: number = Date.now(), overrides: OverrideTable = embeddedOverrides(reader)): MmdbExportSummary {
  const ctx: V1Context = { scoring: { verifiedCrawler: null, coverage: coverageOf(reader.meta, nowMs) }, policy: DEFAULT_POLICY, rdapOwner: null, now: nowMs };
  const values = new RecordValues(reader, ctx, overrides);
  const v4 = rangesOf(reader, 4, values, overrides);
  const v6 = rangesOf(reader, 6, values, overrides);
  const written = writeMmdb(path, v4, v6, values.data.bytes(), Date.parse(reader.meta.builtAt));
  return { path, ...written, values: values.values };
}

/**
 * Opens the index file at `indexPath` (IndexFileError when refused) and
 * exports it to `mmdbPath`, with the overrides a lookup applies laid over
 * it: the index's own and, when given, the operator's file.
 */
export function exportIndexFile(indexPath: string, mmdbPath: string, overrides?: OverridesHolder): MmdbExportSummary {
  const reader = IndexReader.open(indexPath);
  return exportMmdb(reader, mmdbPath, Date.now(), overrides ? overrides.tableFor(reader) : embeddedOverrides(reader));
}
