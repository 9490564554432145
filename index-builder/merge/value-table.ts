/** Deduplicated values of one layer; id 0 is reserved for "none". */
export class ValueTable<T> {
  private ids: Map<string, number> | undefined = new Map<string, number>();
  /** values[0] is unused so that 0 can mean "none" everywhere. */
  readonly values: (T | undefined)[] = [undefined];

  /** Returns the id of a value, adding it when new. `key` identifies equal values. */
  intern(value: T, key: string): number {
    const ids = this.ids;
    if (!ids) throw new Error('ValueTable: intern after seal');
    let id = ids.get(key);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(value);
      ids.set(key, id);
    }
    return id;
  }

  /** Ends interning: the keys are let go (the values and their ids stay). */
  seal(): void {
    this.ids = undefined;
  }

  /** The value of an id (undefined for 0). */
  get(id: number): T | undefined {
    return this.values[id];
  }

  /** Number of ids including the reserved 0. */
  get size(): number {
    return this.values.length;
  }
}

/** Interned strings; id 0 is the empty string, which reads back as null. */
export class StringTable {
  private ids: Map<string, number> | undefined = new Map<string, number>([['', 0]]);
  readonly strings: string[] = [''];

  /** Returns the id of a string (0 for undefined, null or empty). */
  id(s: string | null | undefined): number {
    if (s === undefined || s === null || s === '') return 0;
    const ids = this.ids;
    if (!ids) throw new Error('StringTable: intern after seal');
    let id = ids.get(s);
    if (id === undefined) {
      id = this.strings.length;
      this.strings.push(s);
      ids.set(s, id);
    }
    return id;
  }

  /** Ends interning: the lookup map goes, the strings stay. */
  seal(): void {
    this.ids = undefined;
  }
}
