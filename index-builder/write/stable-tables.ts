/**
 * Encoding sub-tables and records at the ids of the previous index (stable
 * ids, merge/stable-ids.ts): every row equal to a previous row keeps its id,
 * new rows fill vanished ids then append, and a vanished row no new row
 * replaced stays as it was (nothing refers to it; its bytes do not change).
 */
import { RECORD_WIDTH, RecordCol, Section, TableLayout } from '../../src/index/format.ts';
import { assignIds, PreviousRows, type IdAssignment } from '../merge/stable-ids.ts';
import type { PreviousIndex } from './previous-index.ts';
import { encodeRecordRow, type ColumnIds } from './tables.ts';

/** The record column that refers to each sub-table. */
const COLUMN_OF: Record<string, number> = {
  [Section.ASN]: RecordCol.ASN,
  [Section.ALLOCATION]: RecordCol.ALLOCATION,
  [Section.ROUTE]: RecordCol.ROUTE,
  [Section.PROVIDER]: RecordCol.PROVIDER,
  [Section.THREAT_LIST]: RecordCol.THREAT_LIST,
  [Section.THREAT_FEED]: RecordCol.THREAT_FEED,
  [Section.SPECIAL_USE]: RecordCol.SPECIAL_USE,
};

/** Sub-tables placed at stable ids, in the encoders' order, and what records need to follow them. */
export interface PlacedTables {
  sections: [tag: string, words: Uint32Array][];
  columnIds: Map<number, Uint32Array>;
  deadRows: number;
  totalRows: number;
}

/**
 * Encodes every sub-table (the string pool seeded, so their string ids are
 * already the previous file's) and places each id-referenced table's rows at
 * stable ids; tables not referenced by id (ASND, sorted by ASN) go as encoded.
 */
export function placeSubTables(encoders: [tag: string, encode: () => Uint32Array][], previous: PreviousIndex): PlacedTables {
  const placed: PlacedTables = { sections: [], columnIds: new Map(), deadRows: 0, totalRows: 0 };
  for (const [tag, encode] of encoders) {
    const words = encode();
    const column = COLUMN_OF[tag];
    if (column === undefined) {
      placed.sections.push([tag, words]);
      continue;
    }
    const width = TableLayout[tag as keyof typeof TableLayout].length;
    const before = previous.u32(tag);
    const beforeRows = Math.floor(before.length / width);
    const index = new PreviousRows(width, beforeRows);
    for (let p = 1; p < beforeRows; p++) index.add(before, p * width, p);
    const a = assignIds(words.length / width, beforeRows, (r) => index.find(words, r * width));
    const out = new Uint32Array(a.count * width);
    // Dead previous rows stay as they were: their bytes do not change.
    out.set(before.subarray(0, Math.min(before.length, out.length)));
    for (let r = 1; r < words.length / width; r++) out.set(words.subarray(r * width, (r + 1) * width), a.ids[r] * width);
    out.fill(0, 0, width);
    placed.sections.push([tag, out]);
    placed.columnIds.set(column, a.ids);
    placed.deadRows += a.dead;
    placed.totalRows += a.count;
  }
  return placed;
}

/** Assigns each build record its file id: its file-layout row matched against the previous file's RECS. */
export function assignRecordIds(buildRows: Uint32Array, count: number, geo: Uint32Array, columnIds: ColumnIds, previous: PreviousIndex): IdAssignment {
  const beforeRows = previous.rowCount(Section.RECORDS, RECORD_WIDTH);
  const index = new PreviousRows(RECORD_WIDTH, beforeRows);
  previous.forEachChunk(Section.RECORDS, RECORD_WIDTH, (words, first, rows) => {
    for (let k = 0; k < rows; k++) if (first + k > 0) index.add(words, k * RECORD_WIDTH, first + k);
  });
  const row = new Uint32Array(RECORD_WIDTH);
  const f32 = new Float32Array(row.buffer);
  return assignIds(count, beforeRows, (r) => {
    encodeRecordRow(buildRows, r, geo, row, f32, 0, columnIds);
    return index.find(row, 0);
  });
}

/** The file's RECS: each build record at its assigned id, previous rows no record took kept as they were. */
export function placeRecords(buildRows: Uint32Array, count: number, geo: Uint32Array, columnIds: ColumnIds, a: IdAssignment, previous: PreviousIndex): Uint32Array {
  const out = new Uint32Array(a.count * RECORD_WIDTH);
  const f32 = new Float32Array(out.buffer);
  if (a.dead > 0) {
    previous.forEachChunk(Section.RECORDS, RECORD_WIDTH, (words, first, rows) => {
      for (let k = 0; k < rows; k++) {
        if (a.taken[first + k]) continue;
        out.set(words.subarray(k * RECORD_WIDTH, (k + 1) * RECORD_WIDTH), (first + k) * RECORD_WIDTH);
      }
    });
  }
  for (let r = 0; r < count; r++) encodeRecordRow(buildRows, r, geo, out, f32, a.ids[r] * RECORD_WIDTH, columnIds);
  return out;
}
