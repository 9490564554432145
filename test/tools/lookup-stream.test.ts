/**
 * The lookup command's stream and CSV: RFC 4180 quoting, the column of a
 * CSV/TSV line, bad and overlong lines reported with their number while
 * the stream goes on, and output written chunk by chunk (constant memory).
 */
import { beforeAll, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { IndexReader } from '../../src/index/reader.ts';
import { buildV1 } from '../../src/lookup/v1.ts';
import { loadPolicy, type Policy } from '../../src/scoring/index.ts';
import { CSV_SUBKEYS, csvCell, csvColumns, csvField, csvRow } from '../../src/commands/lookup/csv.ts';
import { lookupStream, MAX_LINE, type Answerer, type StreamOptions } from '../../src/commands/lookup/stream.ts';
import { fixtureIndexPath } from '../helpers/fixture-index.ts';

/** An RFC 4180 parser independent of the code under test (quoted fields may hold commas, quotes and newlines). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(cell), (cell = '');
    else if (ch === '\n') row.push(cell), rows.push(row), (row = []), (cell = '');
    else cell += ch;
  }
  if (cell !== '' || row.length) row.push(cell), rows.push(row);
  return rows;
}

/** Answers with a fixed object naming the address, so stream tests need no index. */
const isV4 = (ip: string) => /^\d+\.\d+\.\d+\.\d+$/.test(ip) && ip.split('.').every((n) => Number(n) <= 255);
const echo: Answerer = { answer: (ip) => (isV4(ip) ? JSON.stringify({ ip, note: `a "quoted", multi\nline value for ${ip}` }) : null) };

async function runStream(input: Array<string | Uint8Array>, over: Partial<StreamOptions> = {}) {
  const out: string[] = [];
  const bad: string[] = [];
  const counts = await lookupStream(echo, (async function* () { yield* input; })(), { format: 'ndjson', column: null, fields: null, write: (t) => void out.push(t), reportBad: (m) => void bad.push(m), ...over });
  return { out: out.join(''), bad, counts };
}

test('csvCell quotes exactly the cells that need it and doubles inner quotes', () => {
  expect(csvCell(null)).toBe('');
  expect(csvCell('plain text')).toBe('plain text');
  expect(csvCell(12.5)).toBe('12.5');
  expect(csvCell(false)).toBe('false');
  expect(csvCell('a,b')).toBe('"a,b"');
  expect(csvCell('say "hi"')).toBe('"say ""hi"""');
  expect(csvCell('two\nlines')).toBe('"two\nlines"');
  expect(csvCell('cr\r')).toBe('"cr\r"');
  expect(csvCell(['AS1', 'AS2'])).toBe('"[""AS1"",""AS2""]"');
});

test('CSV rows of real v1 objects read back with an independent RFC 4180 parser', async () => {
  const reader = IndexReader.open(await fixtureIndexPath());
  const policy: Policy = await loadPolicy();
  const columns = csvColumns(null);
  for (const ip of ['8.8.8.8', '185.220.101.1', '2001:4860:4801:10::1', '10.0.0.1', '5.101.96.10']) {
    const body = buildV1(reader.lookup(ip)!, { scoring: { verifiedCrawler: null }, policy, now: 0 }, null);
    const [cells] = parseCsv(csvRow(columns, body));
    expect(cells.length).toBe(columns.length);
    columns.forEach((c, i) => {
      const v = c.key === null ? body[c.field] : (body[c.field] as Record<string, unknown> | null)?.[c.key] ?? null;
      expect(cells[i]).toBe(v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
    });
    // The column table names every member of the objects it splits (a new member would otherwise be dropped).
    for (const [field, keys] of Object.entries(CSV_SUBKEYS)) if (body[field] !== null) expect(Object.keys(body[field] as object)).toEqual([...keys]);
  }
});

test('csvField reads a column of CSV and TSV lines with quoting', () => {
  expect(csvField('a,b,c', 2, ',')).toBe('b');
  expect(csvField('a,b,c', 3, ',')).toBe('c');
  expect(csvField('a,b', 3, ',')).toBeNull();
  expect(csvField('"x, y",8.8.8.8', 2, ',')).toBe('8.8.8.8');
  expect(csvField('"say ""hi""",1.1.1.1,z', 1, ',')).toBe('say "hi"');
  expect(csvField('"x",1.1.1.1', 2, ',')).toBe('1.1.1.1');
  expect(csvField('"open,1.1.1.1', 2, ',')).toBeNull();
  expect(csvField('t\t9.9.9.9\tz', 2, '\t')).toBe('9.9.9.9');
});

test('bad lines are reported with their line number and the stream goes on', async () => {
  const { out, bad, counts } = await runStream(['1.1.1.1\nnope\n\n2.2', '.2.2\r\n300.1.1.1\n3.3.3.3']);
  expect(out.split('\n').filter(Boolean).map((l) => JSON.parse(l).ip)).toEqual(['1.1.1.1', '2.2.2.2', '3.3.3.3']);
  expect(bad).toEqual(['line 2: not an IP address: "nope"', 'line 5: not an IP address: "300.1.1.1"']);
  expect(counts).toEqual({ lines: 6, answered: 3, bad: 2 });
});

test('an overlong line is reported and dropped without being held; the next line is answered', async () => {
  const long = 'x'.repeat(MAX_LINE);
  const { out, bad } = await runStream(['1.1.1.1\n', long, long, 'tail\n4.4.4.4\n', 'y'.repeat(MAX_LINE + 5)]);
  expect(out.split('\n').filter(Boolean).map((l) => JSON.parse(l).ip)).toEqual(['1.1.1.1', '4.4.4.4']);
  expect(bad).toEqual([`line 2: longer than ${MAX_LINE} characters`, `line 4: longer than ${MAX_LINE} characters`]);
});

test('--column with --format csv: the address column of each line, answers as CSV rows', async () => {
  const { out, bad } = await runStream(['when,client\n"mon, 1",1.1.1.1\n', 'tue,"2.2.2.2"\nwed\n'], { column: 2, format: 'csv' });
  const rows = parseCsv(out);
  expect(rows[0]).toEqual(['ip', 'stack', 'location.country', ...rows[0].slice(3)]);
  expect(rows.length).toBe(3);
  const ipAt = rows[0].indexOf('ip');
  expect(rows.slice(1).map((r) => r[ipAt])).toEqual(['1.1.1.1', '2.2.2.2']);
  expect(bad).toEqual(['line 1: not an IP address: "client"', 'line 4: no column 2: "wed"']);
  // The header's columns match what csvColumns gives for the projection.
  expect(rows[0]).toEqual(csvColumns(null).map((c) => c.name));
});

test('answers are written chunk by chunk, before the rest of the input is read (constant memory)', async () => {
  const written: string[] = [];
  let readAhead = 0;
  async function* input() {
    for (let i = 0; i < 50; i++) {
      // By the time chunk i is asked for, the answers of chunk i-1 are out.
      expect(written.length).toBe(i);
      readAhead++;
      yield `10.0.0.${i}\n`;
    }
  }
  await lookupStream(echo, input(), { format: 'ndjson', column: null, fields: null, write: async (t) => void written.push(t), reportBad: () => {} });
  expect(readAhead).toBe(50);
  expect(written.length).toBe(50);
});

test('progress is reported while streaming and once at the end with the final counts', async () => {
  const seen: Array<{ lines: number; answered: number; bad: number }> = [];
  const lines = Array.from({ length: 40_000 }, (_, i) => `10.0.${(i >> 8) & 255}.${i & 255}`).join('\n');
  await runStream([lines, '\nbad\n'], { progress: (c) => void seen.push({ ...c }) });
  expect(seen.length).toBeGreaterThan(1);
  expect(seen.at(-1)).toEqual({ lines: 40_001, answered: 40_000, bad: 1 });
});
