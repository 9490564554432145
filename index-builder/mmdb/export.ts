/**
 * Writes an index as a MaxMind DB (format spec 2.0): the search tree over
 * the index's intervals (adjacent intervals with the same value merged), a
 * deduplicated data section of geoip-record.ts values, and the metadata.
 * The file appears atomically (temp file, fsync, rename), like the index.
 */
import { readFileSync } from 'node:fs';
import { IndexReader } from '../../src/index/reader.ts';
import type { V1Context } from '../../src/lookup/v1.ts';
import { coverageOf } from '../../src/scoring/coverage.ts';
import { DEFAULT_POLICY } from '../../src/scoring/index.ts';
import { removeStaleTempFiles, writeFileAtomic } from '../write/atomic-file.ts';
import { MmdbDataWriter, MmdbUint } from './encoder.ts';
import { mmdbRecord } from './geoip-record.ts';
import { buildSearchTree, NO_DATA, type Ranges } from './search-tree.ts';
import { openMmdb } from './tree.ts';

/** The database_type: "-City" tells GeoIP2 readers (Elasticsearch, Logstash, Vector) to read the City fields. */
export const MMDB_DATABASE_TYPE = 'ipintel-City';

const METADATA_MARKER = new Uint8Array([0xab, 0xcd, 0xef, ...new TextEncoder().encode('MaxMind.com')]);

/** What was written. */
export interface MmdbExportSummary {
  path: string;
  sizeBytes: number;
  nodeCount: number;
  recordSize: number;
  /** Distinct values in the data section. */
  values: number;
}

/** Record id -> data offset, computed once per record (-2: not yet). */
class RecordValues {
  private readonly offsets: Int32Array;
  readonly data = new MmdbDataWriter();
  values = 0;

  constructor(
    private readonly reader: IndexReader,
    private readonly ctx: V1Context,
  ) {
    this.offsets = new Int32Array(reader.meta.counts.records).fill(-2);
  }

  offsetOf(recordId: number): number {
    let at = this.offsets[recordId];
    if (at !== -2) return at;
    const value = mmdbRecord(this.reader.record(recordId), this.ctx);
    if (value === null) at = NO_DATA;
    else {
      const before = this.data.size;
      at = this.data.write(value);
      if (this.data.size > before) this.values++;
    }
    this.offsets[recordId] = at;
    return at;
  }
}

/** One family's intervals as ranges with data offsets, neighbours with the same offset merged. */
function rangesOf(reader: IndexReader, family: 4 | 6, values: RecordValues): Ranges {
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

/** The metadata map of spec 2.0 (types as the spec requires them). */
function metadataBytes(nodeCount: number, recordSize: number, builtAtMs: number): Uint8Array {
  const meta = new MmdbDataWriter(false);
  meta.write({
    binary_format_major_version: new MmdbUint(2, 16),
    binary_format_minor_version: new MmdbUint(0, 16),
    build_epoch: new MmdbUint(BigInt(Math.floor(builtAtMs / 1000)), 64),
    database_type: MMDB_DATABASE_TYPE,
    description: {
      en: 'ipintel index export: GeoIP2-City, GeoLite2-ASN and GeoIP2-Anonymous-IP field names, plus ipintel network, routing, score and classification',
    },
    ip_version: new MmdbUint(6, 16),
    languages: ['en'],
    node_count: new MmdbUint(nodeCount, 32),
    record_size: new MmdbUint(recordSize, 16),
  });
  return meta.bytes().slice();
}

/**
 * Writes `reader`'s index as a MaxMind DB at `path`. Classification and
 * score are the API's for an anonymous caller at `nowMs` (coverage and
 * staleness as of then; no crawler proof); the build epoch is the index's.
 */
export function exportMmdb(reader: IndexReader, path: string, nowMs: number = Date.now()): MmdbExportSummary {
  const ctx: V1Context = { scoring: { verifiedCrawler: null, coverage: coverageOf(reader.meta, nowMs) }, policy: DEFAULT_POLICY, rdapOwner: null, now: nowMs };
  const values = new RecordValues(reader, ctx);
  const v4 = rangesOf(reader, 4, values);
  const v6 = rangesOf(reader, 6, values);
  const data = values.data.bytes();
  const tree = buildSearchTree(v4, v6, data.length);
  const chunks = [tree.bytes, new Uint8Array(16), data, METADATA_MARKER, metadataBytes(tree.nodeCount, tree.recordSize, Date.parse(reader.meta.builtAt))];
  removeStaleTempFiles(path);
  // The file must open as a MaxMind DB before it replaces the old one.
  writeFileAtomic(path, chunks, (tmp) => void openMmdb(readFileSync(tmp)));
  return { path, sizeBytes: chunks.reduce((n, c) => n + c.length, 0), nodeCount: tree.nodeCount, recordSize: tree.recordSize, values: values.values };
}

/** Opens the index file at `indexPath` (IndexFileError when refused) and exports it to `mmdbPath`. */
export function exportIndexFile(indexPath: string, mmdbPath: string): MmdbExportSummary {
  return exportMmdb(IndexReader.open(indexPath), mmdbPath);
}
