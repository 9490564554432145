/**
 * The small DNS vocabulary crawler verification needs: PTR, A and AAAA
 * answers, negative answers with their cache lifetime, and failures.
 */

export type QueryType = 'PTR' | 'A' | 'AAAA';

/** A DNS answer for one question: the values found, or an authoritative "none". */
export type DnsAnswer =
  | {
      kind: 'records';
      /** PTR: normalized host names; A/AAAA: canonical address text. */
      values: string[];
      /** Seconds the answer may be cached (smallest TTL of the records). */
      ttl: number;
    }
  | {
      kind: 'negative';
      /** NXDOMAIN (no such name) or NODATA (name exists, no record of the type). */
      rcode: 'NXDOMAIN' | 'NODATA';
      /** RFC 2308 negative TTL from the SOA, null when the server sent none. */
      ttl: number | null;
    };

export type DnsFailureReason = 'timeout' | 'server_failure' | 'network' | 'malformed';

/** The question could not be answered (no server replied usefully in time). */
export class DnsFailure extends Error {
  constructor(
    readonly reason: DnsFailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'DnsFailure';
  }
}

/** Something that asks DNS questions: a UDP client or the system resolver. */
export interface DnsTransport {
  /** Answers one question; rejects with DnsFailure when it cannot. */
  query(name: string, type: QueryType): Promise<DnsAnswer>;
}
