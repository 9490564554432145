/** Runs async jobs one at a time, in call order (a promise-chain mutex). */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `job` after every job queued before it has settled; resolves or rejects with its result. */
  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job, job);
    // The chain must survive a failed job, and must not hold its value.
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
