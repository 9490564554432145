/**
 * The overrides an index file carries (a build's `overrides` sources,
 * section OVRD), as a table made once per opened index. Checked by the
 * builder, so a line refused here means a damaged file: it is left out
 * and the rest apply.
 */
import { OverridesFileError, readOverridesText } from '../../contract/overrides.ts';
import type { IndexReader } from '../../index/reader.ts';
import { OverrideColumns, OverrideTable } from './table.ts';

const tables = new WeakMap<IndexReader, OverrideTable>();

/** The index's own overrides (empty when its build had none). */
export function embeddedOverrides(index: IndexReader): OverrideTable {
  let t = tables.get(index);
  if (t === undefined) {
    const text = index.embeddedOverrides();
    try {
      if (text === null) t = OverrideTable.EMPTY;
      else {
        const columns = new OverrideColumns();
        readOverridesText(text, `${index.file.path} (overrides section)`, (e) => columns.add(e));
        t = OverrideTable.fromColumns(columns).table;
      }
    } catch (e) {
      if (!(e instanceof OverridesFileError)) throw e;
      t = OverrideTable.EMPTY;
    }
    tables.set(index, t);
  }
  return t;
}
