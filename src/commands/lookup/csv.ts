/**
 * CSV for the lookup command: reading one column of an input line, and
 * writing v1 objects as RFC 4180 rows with one column per leaf of the
 * fields asked for.
 */
import { V1_FIELDS } from '../../lookup/v1.ts';

/**
 * Keys of the v1 objects whose members become their own columns
 * (`location.country_code`); every other field is one column of JSON text.
 * A test checks these against the objects buildV1 makes.
 */
export const CSV_SUBKEYS: Readonly<Record<string, readonly string[]>> = {
  location: ['country', 'country_code', 'region', 'city', 'postal_code', 'latitude', 'longitude', 'timezone', 'timezone_name'],
  network: ['asn', 'org', 'category', 'operator', 'operator_type', 'service_name', 'owner', 'allocation', 'routability', 'is_special_use', 'is_bogon'],
  routing: ['origin_asn', 'origins', 'prefix', 'rpki_status', 'confidence', 'origin_conflict'],
  score: ['ip_score', 'risk_score', 'band', 'verdict', 'recommended_action'],
  classification: ['usage_type', 'is_datacenter', 'is_vpn', 'is_proxy', 'is_tor', 'is_privacy_relay', 'is_mobile', 'is_known_crawler', 'is_verified_crawler', 'proxy_type', 'confidence', 'traits', 'threat_level'],
};

/** One output column: a top-level field, and a key inside it or null for the field itself. */
export interface CsvColumn {
  name: string;
  field: string;
  key: string | null;
}

/** The columns for a projection (null: every field), in the v1 object's order. */
export function csvColumns(fields: ReadonlySet<string> | null): CsvColumn[] {
  const out: CsvColumn[] = [];
  for (const field of V1_FIELDS) {
    if (fields !== null && !fields.has(field)) continue;
    const keys = CSV_SUBKEYS[field];
    if (keys) for (const key of keys) out.push({ name: `${field}.${key}`, field, key });
    else out.push({ name: field, field, key: null });
  }
  return out;
}

/** A value as a CSV cell: null is empty, objects and arrays are JSON, quoted when it holds `"`, `,`, CR or LF. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The header line (with its newline). */
export function csvHeader(columns: readonly CsvColumn[]): string {
  return `${columns.map((c) => csvCell(c.name)).join(',')}\n`;
}

/** One row (with its newline) of a v1 object. */
export function csvRow(columns: readonly CsvColumn[], body: Record<string, unknown>): string {
  let line = '';
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i];
    const v = body[c.field];
    const cell = c.key === null ? v : v === null || typeof v !== 'object' ? null : (v as Record<string, unknown>)[c.key];
    line += i === 0 ? csvCell(cell) : `,${csvCell(cell)}`;
  }
  return `${line}\n`;
}

/**
 * Field `column` (1-based) of a CSV or TSV line; `"…"` quoting with `""`
 * escapes is honoured. Null when the line has fewer fields or a quote is
 * not closed. A record spanning lines is not supported (lines are read alone).
 */
export function csvField(line: string, column: number, delimiter: string): string | null {
  let field = 1;
  let i = 0;
  const n = line.length;
  while (field < column) {
    if (line[i] === '"') {
      const end = closingQuote(line, i);
      if (end < 0) return null;
      i = end + 1;
    }
    const next = line.indexOf(delimiter, i);
    if (next < 0) return null;
    i = next + 1;
    field++;
  }
  if (line[i] === '"') {
    const end = closingQuote(line, i);
    if (end < 0) return null;
    return line.slice(i + 1, end).replaceAll('""', '"');
  }
  const next = line.indexOf(delimiter, i);
  return line.slice(i, next < 0 ? n : next);
}

/** Index of the quote closing the quoted field opened at `open`, or -1. */
function closingQuote(line: string, open: number): number {
  let i = open + 1;
  for (;;) {
    const q = line.indexOf('"', i);
    if (q < 0) return -1;
    if (line[q + 1] !== '"') return q;
    i = q + 2;
  }
}
