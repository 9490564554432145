/**
 * A family's intervals parked on disk while a build following a previous
 * index waits for the record ids (known only after both sweeps and the
 * sub-tables): held in memory they added ~125 MiB to the full build's peak.
 */
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import type { FamilyIntervals } from '../merge/sweep.ts';
import { readFully } from './verify-file.ts';
import { bytesOf } from './index-file-writer.ts';
import { tempPathFor } from '../../src/file-io/atomic-file.ts';

/** Intervals written to one temp file, read back a family at a time. */
export class SpilledIntervals {
  private readonly fd: number;
  private at = 0;
  private readonly parked: { family: FamilyIntervals['family']; count: number; offset: number; startWords: number }[] = [];

  private readonly path: string;

  /** Opens a temp file beside the index `out`, named as its temp files are so a killed build's is found and removed. */
  constructor(out: string) {
    this.path = `${tempPathFor(out)}.intervals`;
    this.fd = openSync(this.path, 'w+', 0o600);
  }

  /** Writes a family's starts and record ids out (the caller lets its arrays go). */
  park(iv: FamilyIntervals): void {
    this.parked.push({ family: iv.family, count: iv.count, offset: this.at, startWords: iv.startWords.length });
    for (const a of [iv.startWords, iv.recs]) {
      const bytes = bytesOf(a);
      for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done, this.at + done);
      this.at += bytes.length;
    }
  }

  /** Each parked family in order, read back into memory one at a time. */
  *families(): Generator<FamilyIntervals> {
    for (const p of this.parked.splice(0)) {
      const startWords = new Uint32Array(p.startWords);
      const recs = new Uint32Array(p.count);
      readFully(this.fd, bytesOf(startWords), startWords.byteLength, p.offset);
      readFully(this.fd, bytesOf(recs), recs.byteLength, p.offset + startWords.byteLength);
      yield { family: p.family, count: p.count, startWords, recs };
    }
  }

  /** Closes and removes the temp file. */
  dispose(): void {
    closeSync(this.fd);
    rmSync(this.path, { force: true });
  }
}
