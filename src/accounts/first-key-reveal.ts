/**
 * A first key's secret, held in memory only (never on disk) between the
 * sign-in that made it and the session's next dashboard view, which shows
 * it once. Each worker thread of a host keeps its own copy, mirrored through
 * `onChange`, since that view may reach any of them.
 */
import { hashSecret } from './secrets.ts';

/** How long a first key waits in memory for the dashboard to show it. */
const REVEAL_TTL_MS = 10 * 60_000;

/** A secret held for a session, and until when. */
export interface HeldSecret {
  secret: string;
  until: number;
}

/** Tells the other worker threads a secret was held (`held`) or forgotten (null). */
export type RevealChange = (sessionHash: string, held: HeldSecret | null) => Promise<void>;

/** Secrets held per session id hash, for one showing. */
export class FirstKeyReveals {
  private readonly held = new Map<string, HeldSecret>();

  constructor(
    private readonly now: () => number,
    private readonly onChange: RevealChange | undefined,
  ) {}

  /** Holds `secret` for the session of `sessionToken`; resolves once every worker holds it. */
  async hold(sessionToken: string, secret: string): Promise<void> {
    const now = this.now();
    for (const [h, r] of this.held) if (r.until <= now) this.held.delete(h);
    const held = { secret, until: now + REVEAL_TTL_MS };
    this.held.set(hashSecret(sessionToken), held);
    await this.onChange?.(hashSecret(sessionToken), held);
  }

  /** Applies a secret held or forgotten by another worker thread. */
  mirror(sessionHash: string, held: HeldSecret | null): void {
    if (held === null) this.held.delete(sessionHash);
    else if (held.until > this.now()) this.held.set(sessionHash, held);
  }

  /** Takes (and forgets, on every worker before resolving) the secret held for a session: shown once. */
  async take(sessionToken: string): Promise<string | null> {
    const idHash = hashSecret(sessionToken);
    const r = this.held.get(idHash);
    if (r) {
      this.held.delete(idHash);
      await this.onChange?.(idHash, null);
    }
    return r && r.until > this.now() ? r.secret : null;
  }

  /** Forgets the secret of an ended session (its id hash), on every worker without waiting. */
  forgetSession(idHash: string): void {
    if (this.held.delete(idHash)) void this.onChange?.(idHash, null);
  }

  /** Forgets every secret (the store is closing). */
  clear(): void {
    this.held.clear();
  }
}
