/**
 * The overrides a lookup applies when both the operator's file and the
 * index's own (a build's `overrides` sources) hold entries: the two tables
 * asked in turn, the more specific match answering and the file's winning
 * on the same prefix. The same answer as one table built from both, without
 * building it: that build costs seconds for a large file and would run on
 * every serving thread at each new file or index (issue 36, finding 8).
 */
import type { OverrideMatch, OverrideTable } from './table.ts';

/** What a lookup reads of its overrides (an OverrideTable, or the two layered). */
export interface OverrideLookup {
  readonly size: number;
  find(ip: string): OverrideMatch | null;
}

/** Prefix length of a match's CIDR text. */
function prefixLength(m: OverrideMatch): number {
  return Number(m.cidr.slice(m.cidr.lastIndexOf('/') + 1));
}

/** The file's table over the index's own, most specific match first (see the file comment). */
export class LayeredOverrides implements OverrideLookup {
  constructor(
    private readonly file: OverrideTable,
    private readonly own: OverrideTable,
  ) {}

  get size(): number {
    return this.file.size + this.own.size;
  }

  find(ip: string): OverrideMatch | null {
    const a = this.file.find(ip);
    const b = this.own.find(ip);
    if (a === null || b === null) return a ?? b;
    return prefixLength(b) > prefixLength(a) ? b : a;
  }
}

/** The overrides a lookup on an index applies: whichever table holds entries, or both layered. */
export function overridesOver(file: OverrideTable, own: OverrideTable): OverrideLookup {
  if (own.size === 0) return file;
  if (file.size === 0) return own;
  return new LayeredOverrides(file, own);
}
