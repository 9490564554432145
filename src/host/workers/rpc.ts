/**
 * Calls between the primary and a worker thread over postMessage: a call
 * carries an id and an operation, the other side answers with the same id.
 * Errors travel as {code, message, details} so an ApiError thrown on one
 * side is thrown again on the other.
 */

/** Both ends of a worker: `postMessage` out, `onmessage` in. */
export interface MessageEnd {
  postMessage(message: unknown): void;
}

/** An error carried across threads. */
export interface WireError {
  code: string | null;
  message: string;
  details: unknown;
}

/** A call, an answer, or a one-way note. */
export type WireMessage =
  | { kind: 'call'; id: number; op: string; args: unknown }
  | { kind: 'reply'; id: number; ok: true; value: unknown }
  | { kind: 'reply'; id: number; ok: false; error: WireError }
  | { kind: 'note'; op: string; args: unknown };

/** Turns any thrown value into its wire form. */
export function toWireError(e: unknown): WireError {
  const err = e as { code?: unknown; message?: unknown; details?: unknown };
  return {
    code: typeof err?.code === 'string' ? err.code : null,
    message: typeof err?.message === 'string' ? err.message : String(e),
    details: err?.details ?? null,
  };
}

/** An error answered by the other side (its code and details kept). */
export class RemoteError extends Error {
  constructor(readonly wire: WireError) {
    super(wire.message);
  }
}

/** One end of the call channel. */
export class Rpc {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void; timer: ReturnType<typeof setTimeout> }>();

  constructor(
    private readonly end: MessageEnd,
    /** Answers the other side's calls. */
    private readonly serve: (op: string, args: unknown) => unknown,
    /** Receives one-way notes. */
    private readonly onNote: (op: string, args: unknown) => void = () => {},
  ) {}

  /** Calls `op` on the other side; rejects after `timeoutMs` without an answer. */
  call<T>(op: string, args: unknown, timeoutMs: number): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${op}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.end.postMessage({ kind: 'call', id, op, args } satisfies WireMessage);
    });
  }

  /** Sends a one-way note. */
  note(op: string, args: unknown): void {
    this.end.postMessage({ kind: 'note', op, args } satisfies WireMessage);
  }

  /** Fails every call still waiting (the other side is gone). */
  abandon(reason: string): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error(reason));
      this.pending.delete(id);
    }
  }

  /** Handles one incoming message; returns false when it is not part of the protocol. */
  receive(message: unknown): boolean {
    const m = message as WireMessage;
    if (m?.kind === 'reply') {
      const p = this.pending.get(m.id);
      if (!p) return true;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.ok) p.resolve(m.value);
      else p.reject(new RemoteError(m.error));
      return true;
    }
    if (m?.kind === 'call') {
      void this.answer(m.id, m.op, m.args);
      return true;
    }
    if (m?.kind === 'note') {
      this.onNote(m.op, m.args);
      return true;
    }
    return false;
  }

  private async answer(id: number, op: string, args: unknown): Promise<void> {
    try {
      const value = await this.serve(op, args);
      this.end.postMessage({ kind: 'reply', id, ok: true, value } satisfies WireMessage);
    } catch (e) {
      this.end.postMessage({ kind: 'reply', id, ok: false, error: toWireError(e) } satisfies WireMessage);
    }
  }
}
