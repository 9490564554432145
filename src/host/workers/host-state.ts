/**
 * What every worker of a host can read without asking the primary: per
 * worker slot, the index generation it serves (0: not serving, e.g. while
 * it restarts), and the host's crash count. One SharedArrayBuffer, written
 * by each worker for its own slot and by the primary.
 */

/** Layout: [0] worker slots, [1] crashes, [2..] generation per slot. */
const SLOTS = 0;
const CRASHES = 1;
const FIRST = 2;

/** A view of the host state (create in the primary, share `buffer` with the workers). */
export class HostState {
  private readonly cells: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.cells = new Int32Array(buffer);
  }

  /** New state for `workers` slots. */
  static create(workers: number): HostState {
    const state = new HostState(new SharedArrayBuffer((FIRST + workers) * 4));
    Atomics.store(state.cells, SLOTS, workers);
    return state;
  }

  get workers(): number {
    return Atomics.load(this.cells, SLOTS);
  }

  /** Records the generation a slot serves (0: not serving). */
  setGeneration(slot: number, generation: number): void {
    Atomics.store(this.cells, FIRST + slot, generation);
  }

  generationOf(slot: number): number {
    return Atomics.load(this.cells, FIRST + slot);
  }

  /** Whether every serving worker is on the same generation (and at least one serves). */
  agreed(): boolean {
    let seen = 0;
    for (let slot = 0; slot < this.workers; slot++) {
      const g = this.generationOf(slot);
      if (g === 0) continue;
      if (seen !== 0 && g !== seen) return false;
      seen = g;
    }
    return seen !== 0;
  }

  /** Counts a worker crash. */
  countCrash(): void {
    Atomics.add(this.cells, CRASHES, 1);
  }

  get crashes(): number {
    return Atomics.load(this.cells, CRASHES);
  }
}
