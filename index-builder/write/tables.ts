/**
 * Encoding the merged index into typed arrays: interval starts, first-level
 * tables, records and fixed-width sub-tables (see FORMAT.md).
 */
import type { Addr, Family } from '../../src/net/ip.ts';
import { formatCidr, formatIp, rangeToCidrs } from '../../src/net/ip.ts';
import { ASN_CATEGORY_BITS, ASN_DETAIL_DROP, RPKI_CODES, RouteFlag, TableLayout } from '../../src/index/format.ts';
import type { Collector } from '../merge/collector.ts';
import { validateRoute, VrpIndex } from '../merge/rpki.ts';
import type { FamilyIntervals, MergedIndex } from '../merge/sweep.ts';
import type { StringTable } from '../merge/value-table.ts';

type Cell = string | number | null | undefined;

/** Encodes rows into a u32 table per its layout (strings interned, floats as f32 bits). */
export function encodeTable(layout: readonly string[], rows: Cell[][], strings: StringTable): Uint32Array {
  const width = layout.length;
  const u32 = new Uint32Array(rows.length * width);
  const f32 = new Float32Array(u32.buffer);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    for (let c = 0; c < width; c++) {
      const kind = layout[c][0];
      const v = row[c];
      const at = r * width + c;
      if (kind === 's') u32[at] = strings.id(v === null || v === undefined ? '' : String(v));
      else if (kind === 'f') f32[at] = typeof v === 'number' && Number.isFinite(v) ? v : NaN;
      else u32[at] = typeof v === 'number' && v > 0 ? v >>> 0 : 0;
    }
  }
  return u32;
}

/**
 * First-level table over the top `bits` bits: l1[p] is the interval holding
 * the first address whose top bits are p; l1[2^bits] is the last interval.
 * A lookup of an address with top bits p searches only [l1[p], l1[p+1]].
 */
export function encodeL1(iv: FamilyIntervals, bits: number): Uint32Array {
  const size = 2 ** bits;
  const l1 = new Uint32Array(size + 1);
  const n = iv.count;
  const w = iv.startWords;
  const stride = iv.family === 4 ? 1 : 4;
  const shift = 32 - bits;
  // start of interval k <= (p << shift) followed by zeros?
  const startsAtOrBefore = (k: number, target: number): boolean => {
    const w0 = w[k * stride];
    if (w0 !== target) return w0 < target;
    for (let j = 1; j < stride; j++) if (w[k * stride + j] !== 0) return false;
    return true;
  };
  let i = 0;
  for (let p = 0; p < size; p++) {
    const target = (p * 2 ** shift) >>> 0;
    while (i + 1 < n && startsAtOrBefore(i + 1, target)) i++;
    l1[p] = i;
  }
  l1[size] = n - 1;
  return l1;
}

/** The block as a single CIDR when it is one. */
function blockCidr(family: Family, start: Addr, end: Addr): string | null {
  const cidrs = rangeToCidrs(family, start, end);
  return cidrs.length === 1 ? formatCidr(family, cidrs[0].start, cidrs[0].len) : null;
}

/** All sub-tables as encoded u32 arrays, keyed by section tag. */
export function encodeSubTables(collector: Collector, merged: MergedIndex): Record<string, Uint32Array> {
  const s = merged.strings;
  const rows = <T>(values: (T | undefined)[], f: (v: T) => Cell[]): Cell[][] =>
    values.map((v) => (v === undefined ? [] : f(v)));

  const vrpIndex = new VrpIndex(collector.vrps);
  const familyOf = (start: Addr): Family => (typeof start === 'bigint' ? 6 : 4);

  return {
    TGEO: encodeTable(
      TableLayout.TGEO,
      rows(collector.geoValues.values, (g) => [g.countryCode, g.region, g.city, g.postalCode, g.latitude, g.longitude, g.timezone]),
      s,
    ),
    TASN: encodeTable(TableLayout.TASN, rows(merged.asnRows.values, (a) => [a.asn, a.name]), s),
    TALC: encodeTable(
      TableLayout.TALC,
      rows(collector.allocationValues.values, (a) => {
        const fam = familyOf(a.blockStart);
        return [
          blockCidr(fam, a.blockStart, a.blockEnd),
          `${formatIp(fam, a.blockStart)} - ${formatIp(fam, a.blockEnd)}`,
          a.registry,
          a.countryCode,
          a.status,
          a.date,
        ];
      }),
      s,
    ),
    TRTE: encodeTable(
      TableLayout.TRTE,
      rows(collector.routeValues.values, (r) => {
        const status = validateRoute(vrpIndex, r.family, r.start, r.prefixLen, r.origins, !!r.asSet);
        const distinct = new Set(r.origins).size;
        const flags = (distinct > 1 && !r.asSet ? RouteFlag.ORIGIN_CONFLICT : 0) | (r.asSet ? RouteFlag.AS_SET : 0);
        return [formatCidr(r.family, r.start, r.prefixLen), r.origins.join(','), RPKI_CODES.indexOf(status), flags];
      }),
      s,
    ),
    TPRV: encodeTable(TableLayout.TPRV, rows(collector.providerValues.values, (p) => [p.provider, p.category, p.service, p.region]), s),
    TTHL: encodeTable(TableLayout.TTHL, rows(collector.threatListValues.values, (t) => [t.list, t.reference]), s),
    TTHF: encodeTable(
      TableLayout.TTHF,
      rows(collector.threatFeedValues.values, (t) => [t.malware, t.firstSeen, t.lastSeen, t.port, t.status]),
      s,
    ),
    TSPC: encodeTable(TableLayout.TSPC, rows(collector.specialUseValues.values, (v) => [v.name, v.cidr, v.rfc, v.kind, v.global ? 1 : 0]), s),
    ASND: encodeTable(TableLayout.ASND, asnDetailRows(collector, merged), s),
  };
}

/** One row per ASN known to the build, sorted by ASN. */
function asnDetailRows(collector: Collector, merged: MergedIndex): Cell[][] {
  const orgs = new Map<number, string>();
  for (const v of collector.asnValues.values) if (v?.org && !orgs.has(v.asn)) orgs.set(v.asn, v.org);
  const asns = new Set<number>([
    ...collector.asnNames.keys(),
    ...orgs.keys(),
    ...collector.asnDrops.keys(),
    ...collector.asnCategories.keys(),
    ...merged.density.keys(),
  ]);
  const sorted = [...asns].filter((a) => a > 0).sort((a, b) => a - b);
  return sorted.map((asn) => {
    const d = merged.density.get(asn);
    const drop = collector.asnDrops.get(asn);
    let flags = drop ? ASN_DETAIL_DROP : 0;
    for (const c of collector.asnCategories.get(asn) ?? []) flags |= ASN_CATEGORY_BITS[c] ?? 0;
    return [
      asn,
      collector.asnNames.get(asn) ?? orgs.get(asn),
      d?.threatNetworks ?? 0,
      d?.threatAddresses ?? 0,
      d?.total ?? 0,
      drop?.asName,
      drop?.rir,
      drop?.domain,
      drop?.countryCode,
      flags,
    ];
  });
}
