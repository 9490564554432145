/**
 * Hand-made LookupHits for crawler tests (what the index would answer).
 */
import type { IndexRecord, LookupHit } from '../../src/index/record.ts';

export interface HitFacts {
  crawler?: string | null;
  asnName?: string | null;
  allocation?: IndexRecord['allocation'];
  specialUse?: IndexRecord['specialUse'];
}

/** A hit for `ip` carrying only the facts given (everything else null). */
export function makeHit(ip: string, facts: HitFacts = {}): LookupHit {
  return {
    family: ip.includes(':') ? 6 : 4,
    ip,
    rangeStart: ip,
    rangeEnd: ip,
    recordId: 1,
    record: {
      flags: 0,
      geo: null,
      asn: facts.asnName === undefined || facts.asnName === null ? null : { asn: 15169, name: facts.asnName },
      allocation: facts.allocation ?? null,
      route: null,
      provider: null,
      crawler: facts.crawler ?? null,
      specialUse: facts.specialUse ?? null,
      threatList: null,
      networkType: null,
      threatFeed: null,
    },
  };
}
