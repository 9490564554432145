/**
 * What scoring concludes from an index's coverage (src/index/coverage.ts):
 * whether a missing route is evidence, which signal kinds are missing or
 * stale, and the sentence telling a reader so (docs/scoring.md "Coverage
 * and freshness").
 */
import { EVIDENCE_KINDS, type EvidenceKind } from '../index/evidence-kinds.ts';
import { holds, isStale, type Coverage } from '../index/coverage.ts';
import type { IndexRecord } from '../index/record.ts';

export { EVIDENCE_KINDS, type EvidenceKind } from '../index/evidence-kinds.ts';
export { coverageOf, FULL_COVERAGE, holds, isStale, KIND_BIT, sameCoverage, STALE_AFTER_MS, type Coverage, type KindCoverage } from '../index/coverage.ts';

/**
 * Whether the routing data can speak to a missing route for this record:
 * routes for both families, and snapshots no older than the record's
 * allocation (an allocation of unknown date counts as older).
 */
export function missingRouteIsEvidence(record: IndexRecord, c: Coverage): boolean {
  return c.routesComplete && !allocatedAfterRoutes(record, c);
}

/** Whether the record's allocation is dated after the oldest routing snapshot (false when either date is unknown). */
export function allocatedAfterRoutes(record: IndexRecord, c: Coverage): boolean {
  const allocated = record.allocation?.date;
  return !!allocated && c.routesAsOf !== null && allocated.slice(0, 10) > c.routesAsOf;
}

/** Kinds that raise signals (docs/signals.md "Evidence kinds"), in EVIDENCE_KINDS order. */
const SIGNAL_KINDS: readonly EvidenceKind[] = EVIDENCE_KINDS.filter((k) => !['geolocation', 'asn', 'allocation'].includes(k));

const NONE: readonly EvidenceKind[] = Object.freeze([]);
const gapsMemo = new WeakMap<Coverage, { unavailable: readonly EvidenceKind[]; stale: readonly EvidenceKind[] }>();

/** The signal kinds a coverage lacks and those it holds stale (shared frozen arrays, one pair per coverage object). */
export function coverageGaps(c: Coverage): { unavailable: readonly EvidenceKind[]; stale: readonly EvidenceKind[] } {
  let gaps = gapsMemo.get(c);
  if (!gaps) {
    const unavailable = SIGNAL_KINDS.filter((k) => !holds(c, k));
    const stale = SIGNAL_KINDS.filter((k) => isStale(c, k));
    gaps = { unavailable: unavailable.length ? Object.freeze(unavailable) : NONE, stale: stale.length ? Object.freeze(stale) : NONE };
    gapsMemo.set(c, gaps);
  }
  return gaps;
}

/** Kinds whose absence a reader of an ordinary answer should be told about, in the order named. */
const NOTED_ABSENT: readonly EvidenceKind[] = ['tor', 'vpn', 'proxy', 'relays', 'threat', 'datacenter', 'crawlers', 'routing', 'bogons'];
const KIND_NAMES: Readonly<Record<EvidenceKind, string>> = {
  geolocation: 'geolocation',
  asn: 'ASN',
  allocation: 'allocation',
  routing: 'routing',
  rpki: 'RPKI',
  bogons: 'bogon',
  tor: 'Tor',
  vpn: 'VPN',
  proxy: 'proxy',
  relays: 'privacy relay',
  crawlers: 'crawler',
  datacenter: 'cloud/hosting',
  threat: 'threat',
  network_type: 'network type',
};

/** "a, b or c". */
function listed(names: string[], last: string): string {
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} ${last} ${names[names.length - 1]}`;
}

const notes = new WeakMap<Coverage, string>();

/**
 * The sentence saying what this index cannot tell ("No Tor, VPN or threat data
 * loaded; routing data stale."), or '' when it holds every kind fresh
 * (made once per coverage object).
 */
export function coverageNote(c: Coverage): string {
  let note = notes.get(c);
  if (note === undefined) notes.set(c, (note = composeNote(c)));
  return note;
}

function composeNote(c: Coverage): string {
  const absent = NOTED_ABSENT.filter((k) => !holds(c, k)).map((k) => KIND_NAMES[k]);
  const stale = EVIDENCE_KINDS.filter((k) => isStale(c, k)).map((k) => KIND_NAMES[k]);
  const parts: string[] = [];
  if (absent.length > 0) parts.push(`no ${listed(absent, 'or')} data loaded`);
  if (stale.length > 0) parts.push(`${listed(stale, 'and')} data stale`);
  if (parts.length === 0) return '';
  const text = parts.join('; ');
  return `${text[0].toUpperCase()}${text.slice(1)}.`;
}
