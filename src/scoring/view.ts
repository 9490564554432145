/**
 * The scoring view of a record: exactly the facts scoring reads (flags,
 * network type, which layers are present, the route's RPKI state and origin
 * conflict, the special-use kind, the threat-feed metadata, and whether an
 * operator name is null, empty or a name; whether the allocation postdates
 * the routing snapshots), and a key equal for records with
 * equal views. Kept beside the rules it mirrors (classify.ts, evidence.ts,
 * decision/): a rule that starts reading a new fact of a record must add it
 * here, or the memo of scored answers (lookup/scored-part.ts) would share
 * one answer between records that score differently. Exactness is tested
 * (test/lookup/scored-part.test.ts, test/http/v1-body.test.ts).
 */
import type { IndexRecord, NetworkType } from '../index/record.ts';
import { NETWORK_TYPE_CODES } from '../index/format.ts';
import { allocatedAfterRoutes, FULL_COVERAGE, type Coverage } from './coverage.ts';

/** Stands in for the operator name in a view; a NUL never occurs in feed names (JSON escapes it). */
export const OPERATOR_PLACEHOLDER = '\u0000operator\u0000';

/** A name as the view keeps it: null and empty stay what they are, any other text is the placeholder. */
const viewName = (name: string | null) => (name === null || name === '' ? name : OPERATOR_PLACEHOLDER);

const PRESENT_GEO = Object.freeze({ countryCode: null, region: null, city: null, postalCode: null, latitude: null, longitude: null, timezone: null });
const PRESENT_ALLOCATION = Object.freeze({ cidr: null, range: '', registry: '', countryCode: null, status: '', date: null });
/** An allocation dated after any routing snapshot: its missing route is no evidence (coverage.ts). */
const LATE_ALLOCATION = Object.freeze({ ...PRESENT_ALLOCATION, date: '9999-12-31' });
/** Above the network type codes (at most 2^34): exact in a double. */
const LATE_ALLOCATION_KEY = 2 ** 35;
const PRESENT_THREAT_LIST = Object.freeze({ list: '', reference: null });

const RPKI_CODE: Readonly<Record<string, number>> = { valid: 0, invalid: 1, not_found: 2, unknown: 3 };
const NAME_CODE = (name: string | null) => (name === null ? 1 : name === '' ? 2 : 3);
/** Flag bits a record may carry (src/index/record.ts Flag); anything above takes the text key. */
const FLAG_BITS = 19;
/** The network type code goes above the 30 packed bits (exact in a double: at most 2^34). */
const NETWORK_TYPE_UNIT = 2 ** 30;
const NETWORK_TYPE_KEY = Object.fromEntries(NETWORK_TYPE_CODES.map((t, i) => [t, i * NETWORK_TYPE_UNIT])) as Readonly<Record<NetworkType, number>>;

/**
 * The scoring facts of a record: equal keys mean equal scored parts. Most
 * records (no special-use block, provider or threat-feed entry) get a number
 * packing the facts into 30 bits, cheap to build and to hash on every
 * request; the rest a text key.
 */
export function scoringKey(r: IndexRecord, coverage: Coverage = FULL_COVERAGE): number | string {
  const route = r.route;
  const rpki = route ? RPKI_CODE[route.rpkiStatus] : 0;
  if (r.specialUse !== null || r.provider !== null || r.threatFeed !== null || r.override !== undefined || r.flags >>> FLAG_BITS !== 0 || rpki === undefined) return textKey(r, coverage);
  // bits 0-18 flags, 19 geo, 20 allocation, 21 crawler, 22 threat list, 23-27 route (0 none), 28-29 ASN name state (0 no ASN).
  const routeCode = route ? 1 + rpki * 4 + (route.originConflict ? 2 : 0) + (route.originAsn === null ? 1 : 0) : 0;
  const packed =
    r.flags |
    ((r.geo ? 1 : 0) << 19) |
    ((r.allocation ? 1 : 0) << 20) |
    ((r.crawler === null ? 0 : 1) << 21) |
    ((r.threatList ? 1 : 0) << 22) |
    (routeCode << 23) |
    ((r.asn ? NAME_CODE(r.asn.name) : 0) << 28);
  const late = allocatedAfterRoutes(r, coverage) ? LATE_ALLOCATION_KEY : 0;
  return (r.networkType === null ? packed : packed + NETWORK_TYPE_KEY[r.networkType]) + late;
}

/** The scoring facts as text, for the records scoringKey does not pack: the scoring view itself. */
function textKey(r: IndexRecord, coverage: Coverage): string {
  return JSON.stringify(scoringView(r, coverage));
}

/** A record holding only the facts of scoringKey (operator names replaced by a placeholder), under the index's coverage. */
export function scoringView(r: IndexRecord, coverage: Coverage = FULL_COVERAGE): IndexRecord {
  const route = r.route;
  const special = r.specialUse;
  return {
    flags: r.flags,
    geo: r.geo ? PRESENT_GEO : null,
    asn: r.asn ? { asn: 0, name: viewName(r.asn.name) } : null,
    allocation: r.allocation ? (allocatedAfterRoutes(r, coverage) ? LATE_ALLOCATION : PRESENT_ALLOCATION) : null,
    route: route ? { prefix: '', originAsn: route.originAsn === null ? null : 0, origins: [], rpkiStatus: route.rpkiStatus, originConflict: route.originConflict } : null,
    provider: r.provider ? { name: viewName(r.provider.name), category: r.provider.category, service: null, region: null } : null,
    crawler: r.crawler === null ? null : '',
    specialUse: special ? { name: '', cidr: '', rfc: '', kind: special.kind, globallyReachable: special.globallyReachable } : null,
    threatList: r.threatList ? PRESENT_THREAT_LIST : null,
    threatFeed: r.threatFeed,
    networkType: r.networkType,
    ...(r.override === undefined ? {} : { override: r.override }),
  };
}
