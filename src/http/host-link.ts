/**
 * What a server thread that is one of several workers of a host
 * (src/host/workers/) can ask of the others, through the primary. Absent when
 * one thread serves alone.
 */
import type { ReloadBody } from '../contract/service.ts';

export interface HostLink {
  /** This worker's slot (0-based), for log lines. */
  readonly slot: number;
  /** Reloads the index and policy in every worker; the answer of the host (ApiError when refused). */
  reloadAll(): Promise<ReloadBody>;
  /** The host's metrics (every worker's series summed) in Prometheus text. */
  metricsText(): Promise<string>;
  /** Whether every serving worker serves the same index generation. */
  agreed(): boolean;
  /** The host's count of open connections, shared by its workers (connection-gate.ts allocateConnectionCount). */
  readonly connections?: SharedArrayBuffer;
  /** Has every other worker re-read the keys after a key write here; resolves when they have (bounded). */
  keysChanged(): Promise<void>;
}
