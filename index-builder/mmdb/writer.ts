/**
 * Writes a MaxMind DB (format spec 2.0) from its parts: the search tree over
 * ranges with data offsets, the data section, and the metadata. The file
 * appears atomically (temp file, fsync, rename), like the index, and must
 * open as a MaxMind DB before it replaces the old one.
 */
import { readFileSync } from 'node:fs';
import { removeStaleTempFiles, writeFileAtomic } from '../../src/file-io/atomic-file.ts';
import { MmdbDataWriter, MmdbUint } from './encoder.ts';
import { buildSearchTree, type Ranges } from './search-tree.ts';
import { openMmdb } from './tree.ts';

/** The database_type: "-City" tells GeoIP2 readers (Elasticsearch, Logstash, Vector) to read the City fields. */
export const MMDB_DATABASE_TYPE = 'ipintel-City';

const METADATA_MARKER = new Uint8Array([0xab, 0xcd, 0xef, ...new TextEncoder().encode('MaxMind.com')]);

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

/** Writes the database at `path` from each family's ranges and the data section they point into; `builtAtMs` is its build epoch. */
export function writeMmdb(path: string, v4: Ranges, v6: Ranges, data: Uint8Array, builtAtMs: number): { sizeBytes: number; nodeCount: number; recordSize: number } {
  const tree = buildSearchTree(v4, v6, data.length);
  const chunks = [tree.bytes, new Uint8Array(16), data, METADATA_MARKER, metadataBytes(tree.nodeCount, tree.recordSize, builtAtMs)];
  removeStaleTempFiles(path);
  writeFileAtomic(path, chunks, (tmp) => void openMmdb(readFileSync(tmp)));
  return { sizeBytes: chunks.reduce((n, c) => n + c.length, 0), nodeCount: tree.nodeCount, recordSize: tree.recordSize };
}
