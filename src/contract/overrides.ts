/**
 * The operator's overrides file (`IPINTEL_OVERRIDES`, manifest type
 * `overrides`), declared once: its column names, what each accepts, and the
 * reader shared by the server (src/lookup/overrides/) and the builder
 * (index-builder/parsers/overrides.ts). CSV with a header row (read by
 * csv-parse: quoted fields, BOM, comments) or JSON lines with the same
 * names. A bad line is reported with its number and skipped; a file that
 * cannot be read as a whole (unknown column, no `cidr` column, an open
 * quote, binary bytes, over the limits) is refused as a whole.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { formatCidr, parseCidr, parseIp, type Addr, type Family } from '../net/ip.ts';

/** Most entries one file may hold: the server keeps them in typed arrays (docs/deployment.md gives the memory). */
export const MAX_OVERRIDE_ENTRIES = 1_000_000;
/** Largest file read (a million lines with a short note each fit well under it). */
export const MAX_OVERRIDE_FILE_BYTES = 256 * 1024 * 1024;
/** Longest text value (note, names). */
export const MAX_OVERRIDE_TEXT = 200;
/** Bad lines reported one by one; beyond this only counted. */
export const MAX_REPORTED_ERRORS = 100;

export const OVERRIDE_VERDICTS = ['allow', 'monitor', 'challenge', 'block'] as const;
export const OVERRIDE_USAGE_TYPES = [
  'tor', 'vpn', 'proxy', 'privacy_relay', 'crawler', 'hosting', 'content_delivery', 'network_service', 'webhook',
  'messaging', 'mobile', 'isp', 'business', 'education', 'government', 'non_profit', 'reserved',
] as const;
export const OVERRIDE_CATEGORIES = [
  'residential', 'business', 'education', 'government', 'non_profit', 'mobile', 'hosting', 'content',
  'network_service_provider', 'webhook', 'messaging', 'crawler', 'vpn', 'proxy', 'privacy_relay', 'tor', 'reserved',
] as const;
/** The classification booleans an override may set (true) or clear (false). */
export const OVERRIDE_FLAGS = ['is_datacenter', 'is_vpn', 'is_proxy', 'is_tor', 'is_privacy_relay', 'is_mobile', 'is_known_crawler'] as const;
export type OverrideFlag = (typeof OVERRIDE_FLAGS)[number];

/** What one override names; a key left out is not named (the index still answers it). */
export interface OverrideFields {
  country_code?: string;
  region?: string;
  city?: string;
  latitude?: number;
  longitude?: number;
  timezone_name?: string;
  org?: string;
  operator?: string;
  usage_type?: (typeof OVERRIDE_USAGE_TYPES)[number];
  category?: (typeof OVERRIDE_CATEGORIES)[number];
  is_datacenter?: boolean;
  is_vpn?: boolean;
  is_proxy?: boolean;
  is_tor?: boolean;
  is_privacy_relay?: boolean;
  is_mobile?: boolean;
  is_known_crawler?: boolean;
  /** Risk points added after the signals (-100..100). */
  risk?: number;
  /** A fixed verdict: the risk is moved into that verdict's band. */
  verdict?: (typeof OVERRIDE_VERDICTS)[number];
  note?: string;
}

type Check = (v: unknown) => unknown | Error;

const text: Check = (v) => {
  if (typeof v !== 'string') return new Error('must be text');
  if (v.length > MAX_OVERRIDE_TEXT) return new Error(`longer than ${MAX_OVERRIDE_TEXT} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(v)) return new Error('holds control characters');
  return v;
};
const oneOf =
  (values: readonly string[]): Check =>
  (v) =>
    typeof v === 'string' && values.includes(v) ? v : new Error(`must be one of ${values.join(', ')}`);
const number =
  (lo: number, hi: number, integer = false): Check =>
  (v) => {
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < lo || n > hi || (integer && !Number.isInteger(n))) return new Error(`must be ${integer ? 'an integer' : 'a number'} from ${lo} to ${hi}`);
    return n;
  };
const BOOLEAN_TEXT: Readonly<Record<string, boolean>> = { true: true, false: false, '1': true, '0': false, yes: true, no: false };
const bool: Check = (v) => {
  if (typeof v === 'boolean') return v;
  const b = typeof v === 'string' ? BOOLEAN_TEXT[v.toLowerCase()] : undefined;
  return b === undefined ? new Error('must be true or false') : b;
};
// Intl's tables made on the first file read, not when the module loads: every serving thread loads it, few read a file.
let zones: Set<string> | null = null;
const zone: Check = (v) => (typeof v === 'string' && ((zones ??= new Set(Intl.supportedValuesOf('timeZone'))).has(v) || v === 'UTC') ? v : new Error('must be an IANA time zone name'));
let regions: Intl.DisplayNames | null = null;
/** Codes already checked (at most 26 * 26): a million lines ask Intl a few hundred times. */
const knownCountry = new Map<string, boolean>();
const country: Check = (v) => {
  if (typeof v !== 'string' || !/^[A-Z]{2}$/.test(v)) return new Error('must be an ISO 3166-1 alpha-2 code (upper case)');
  let known = knownCountry.get(v);
  if (known === undefined) {
    try {
      known = (regions ??= new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' })).of(v) !== undefined;
    } catch {
      known = false;
    }
    knownCountry.set(v, known);
  }
  return known ? v : new Error('must be an ISO 3166-1 alpha-2 code (upper case)');
};

/** Every column besides `cidr`, with its check: the one list of what an override may name. */
export const OVERRIDE_COLUMNS: Readonly<Record<keyof OverrideFields, Check>> = {
  country_code: country,
  region: text,
  city: text,
  latitude: number(-90, 90),
  longitude: number(-180, 180),
  timezone_name: zone,
  org: text,
  operator: text,
  usage_type: oneOf(OVERRIDE_USAGE_TYPES),
  category: oneOf(OVERRIDE_CATEGORIES),
  is_datacenter: bool,
  is_vpn: bool,
  is_proxy: bool,
  is_tor: bool,
  is_privacy_relay: bool,
  is_mobile: bool,
  is_known_crawler: bool,
  risk: number(-100, 100, true),
  verdict: oneOf(OVERRIDE_VERDICTS),
  note: text,
};

/** One accepted line. */
export interface OverrideEntry {
  family: Family;
  start: Addr;
  end: Addr;
  len: number;
  /** Shared between entries that name the same fields (frozen). */
  fields: Readonly<OverrideFields>;
  /** 1-based line of the file. */
  line: number;
}

export interface OverrideLineError {
  line: number;
  message: string;
}

/** What a file held: the entries, the bad lines (the first MAX_REPORTED_ERRORS), and how many lines were bad. */
export interface ParsedOverrides {
  entries: OverrideEntry[];
  errors: OverrideLineError[];
  badLines: number;
}

/** Thrown when a file is refused as a whole (the previous overrides stay). */
export class OverridesFileError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = 'OverridesFileError';
  }
}

/**
 * Reads the fields of one row (an object of column -> value); throws Error
 * naming the column at fault. Identical sets of fields are one frozen object
 * (`shared`), so a million lines with a few distinct sets hold a few objects.
 */
function entryOf(row: Record<string, unknown>, line: number, shared: Map<string, Readonly<OverrideFields>>): OverrideEntry {
  const cidrText = row.cidr;
  if (typeof cidrText !== 'string' || cidrText === '') throw new Error('cidr is missing');
  const trimmed = cidrText.trim();
  const cidr = parseCidr(trimmed);
  if (!cidr) throw new Error(`cidr ${JSON.stringify(cidrText.slice(0, 60))} is not an IPv4 or IPv6 prefix or address`);
  // 203.0.113.7/1 is a typo of /32 far more often than a wish to cover half the space: never masked silently.
  const slash = trimmed.indexOf('/');
  const address = slash < 0 ? null : trimmed.slice(0, slash);
  if (address !== null && parseIp(address)?.value !== cidr.start) {
    throw new Error(`cidr ${trimmed} has host bits set: the prefix is ${formatCidr(cidr.family, cidr.start, cidr.len)}, the address alone is ${address}/${cidr.family === 4 ? 32 : 128}`);
  }
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    if (name === 'cidr' || value === undefined || value === null || value === '') continue;
    const check = OVERRIDE_COLUMNS[name as keyof OverrideFields];
    if (!check) throw new Error(`unknown field ${JSON.stringify(name.slice(0, 60))}`);
    const v = check(value);
    if (v instanceof Error) throw new Error(`${name} ${v.message}`);
    fields[name] = v;
  }
  const key = JSON.stringify(fields);
  let same = shared.get(key);
  if (same === undefined) shared.set(key, (same = Object.freeze(fields as OverrideFields)));
  return { family: cidr.family, start: cidr.start, end: cidr.end, len: cidr.len, fields: same, line };
}

/**
 * Parses an overrides file's text (`path` names it in errors). Throws
 * OverridesFileError when the file is refused as a whole.
 */
export function parseOverridesText(content: string, path: string, maxEntries = MAX_OVERRIDE_ENTRIES): ParsedOverrides {
  const entries: OverrideEntry[] = [];
  const read = readOverridesText(content, path, (e) => entries.push(e), maxEntries);
  return { entries, errors: read.errors, badLines: read.badLines };
}

/**
 * parseOverridesText handing each accepted entry to `onEntry` as it is
 * read, without collecting them (a load of a million lines keeps them in
 * columns, src/lookup/overrides/table.ts). Returns the bad lines and the
 * count of entries.
 */
export function readOverridesText(content: string, path: string, onEntry: (e: OverrideEntry) => void, maxEntries = MAX_OVERRIDE_ENTRIES): Omit<ParsedOverrides, 'entries'> & { entries: number } {
  if (content.indexOf('\u0000') >= 0 || content.indexOf('\ufffd') >= 0) throw new OverridesFileError(path, 'holds binary or non-UTF-8 bytes');
  const out = { entries: 0, errors: [] as OverrideLineError[], badLines: 0 };
  const bad = (line: number, message: string) => {
    out.badLines++;
    if (out.errors.length < MAX_REPORTED_ERRORS) out.errors.push({ line, message });
  };
  const shared = new Map<string, Readonly<OverrideFields>>();
  const accept = (row: Record<string, unknown>, line: number) => {
    try {
      const entry = entryOf(row, line, shared);
      if (out.entries >= maxEntries) throw new OverridesFileError(path, `more than ${maxEntries} entries`);
      out.entries++;
      onEntry(entry);
    } catch (e) {
      if (e instanceof OverridesFileError) throw e;
      bad(line, (e as Error).message);
    }
  };
  const first = /^\uFEFF?[ \t]*(?:[#;][^\n]*\n|[ \t]*\r?\n)*[ \t]*(.)/.exec(content);
  if (first && first[1] === '{') readJsonLines(content, accept, bad);
  else readCsv(content, path, accept, bad);
  if (out.entries === 0 && out.badLines > 0) throw new OverridesFileError(path, `no line could be read (line ${out.errors[0].line}: ${out.errors[0].message})`);
  return out;
}

function readJsonLines(content: string, accept: (row: Record<string, unknown>, line: number) => void, bad: (line: number, message: string) => void): void {
  let line = 0;
  let from = 0;
  while (from <= content.length) {
    let to = content.indexOf('\n', from);
    if (to < 0) to = content.length;
    line++;
    const raw = content.slice(from, to).trim();
    from = to + 1;
    if (raw === '' || raw.startsWith('#')) continue;
    let row: unknown;
    try {
      row = JSON.parse(raw);
    } catch {
      bad(line, 'not a JSON object');
      continue;
    }
    if (typeof row !== 'object' || row === null || Array.isArray(row)) bad(line, 'not a JSON object');
    else accept(row as Record<string, unknown>, line);
  }
}

function readCsv(content: string, path: string, accept: (row: Record<string, unknown>, line: number) => void, bad: (line: number, message: string) => void): void {
  let openQuote: string | null = null;
  try {
    parseCsv(content, {
      bom: true,
      comment: '#',
      comment_no_infix: true,
      skip_empty_lines: true,
      trim: true,
      relax_column_count: true,
      skip_records_with_error: true,
      columns: (header: string[]) => {
        const names = header.map((h) => h.trim());
        if (!names.includes('cidr')) throw new OverridesFileError(path, 'the header row has no cidr column');
        const unknown = names.filter((n) => n !== 'cidr' && !Object.hasOwn(OVERRIDE_COLUMNS, n));
        if (unknown.length > 0) throw new OverridesFileError(path, `unknown column(s) in the header row: ${unknown.slice(0, 5).join(', ')}`);
        return names;
      },
      // Each record is taken as it is read and dropped from the parser's output: a million lines never sit in memory as rows.
      on_record: (record: Record<string, string>, context: { lines: number }) => {
        accept(record, context.lines);
        return null;
      },
      on_skip: (err: { code?: string; lines?: number; message: string } | undefined) => {
        // An open quote swallows every line after it: the file as a whole is unreadable.
        if (err?.code === 'CSV_QUOTE_NOT_CLOSED') openQuote = err.message;
        else if (err) bad(err.lines ?? 0, err.message);
      },
    });
  } catch (e) {
    if (e instanceof OverridesFileError) throw e;
    throw new OverridesFileError(path, `not readable as CSV: ${(e as Error).message}`);
  }
  if (openQuote !== null) throw new OverridesFileError(path, `not readable as CSV: ${openQuote}`);
}
