/**
 * `lookup --stdin`: one address per input line (or one column of a CSV/TSV
 * line) in, one answer per line out, in constant memory: input is read a
 * chunk at a time and each chunk's answers are written (waiting for the
 * output to drain) before the next chunk is read. A bad line is reported
 * with its line number and skipped.
 */
import { csvColumns, csvField, csvHeader, csvRow, type CsvColumn } from './csv.ts';

/** Longest input line accepted; a longer one is reported and skipped without being held. */
export const MAX_LINE = 64 * 1024;

/** What answers an address: v1 JSON text, or null when the text is not an address. */
export interface Answerer {
  answer(ip: string, fields: ReadonlySet<string> | null): string | null;
}

export interface StreamOptions {
  format: 'ndjson' | 'csv';
  /** 1-based column of a CSV/TSV line holding the address; null: the whole line is the address. */
  column: number | null;
  fields: ReadonlySet<string> | null;
  /** Writes output text; resolves when the output can take more. */
  write: (text: string) => Promise<void> | void;
  /** Reports a bad line (one line of text, no newline). */
  reportBad: (message: string) => void;
  /** Called now and then with the counts so far (progress display). */
  progress?: (counts: StreamCounts) => void;
}

export interface StreamCounts {
  /** Input lines read (blank ones included). */
  lines: number;
  answered: number;
  bad: number;
}

/** How many lines pass between progress calls. */
const PROGRESS_EVERY = 16384;

/** Runs the stream to the end of the input; resolves with the counts. */
export async function lookupStream(lookup: Answerer, input: AsyncIterable<Uint8Array | string>, options: StreamOptions): Promise<StreamCounts> {
  const counts: StreamCounts = { lines: 0, answered: 0, bad: 0 };
  const columns: CsvColumn[] | null = options.format === 'csv' ? csvColumns(options.fields) : null;
  if (columns) await options.write(csvHeader(columns));
  const decoder = new TextDecoder();
  let delimiter: string | null = null;
  let carry = '';
  /** The current line is longer than MAX_LINE: its text is being dropped until its end. */
  let overlong = false;
  let out = '';

  const handle = (raw: string) => {
    counts.lines++;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    let text: string | null = line;
    if (options.column !== null) {
      delimiter ??= line.includes('\t') ? '\t' : ',';
      text = csvField(line, options.column, delimiter);
      if (text === null) {
        bad(`line ${counts.lines}: no column ${options.column}: ${quoteForReport(line)}`);
        return;
      }
    }
    const body = lookup.answer(text.trim(), options.fields);
    if (body === null) {
      bad(`line ${counts.lines}: not an IP address: ${quoteForReport(text)}`);
      return;
    }
    counts.answered++;
    out += columns ? csvRow(columns, JSON.parse(body)) : `${body}\n`;
    if (options.progress && counts.lines % PROGRESS_EVERY === 0) options.progress(counts);
  };
  const bad = (message: string) => {
    counts.bad++;
    options.reportBad(message);
  };

  for await (const chunk of input) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let from = 0;
    for (;;) {
      const nl = text.indexOf('\n', from);
      if (nl < 0) break;
      if (overlong) {
        overlong = false;
        counts.lines++;
        bad(`line ${counts.lines}: longer than ${MAX_LINE} characters`);
      } else if (carry.length + nl - from > MAX_LINE) {
        carry = '';
        counts.lines++;
        bad(`line ${counts.lines}: longer than ${MAX_LINE} characters`);
      } else {
        handle(carry === '' ? text.slice(from, nl) : carry + text.slice(from, nl));
        carry = '';
      }
      from = nl + 1;
    }
    if (!overlong) {
      carry += text.slice(from);
      if (carry.length > MAX_LINE) {
        carry = '';
        overlong = true;
      }
    }
    if (out !== '') {
      const pending = out;
      out = '';
      await options.write(pending);
    }
  }
  const rest = carry + decoder.decode();
  if (overlong) {
    counts.lines++;
    bad(`line ${counts.lines}: longer than ${MAX_LINE} characters`);
  } else if (rest !== '') handle(rest);
  if (out !== '') await options.write(out);
  options.progress?.(counts);
  return counts;
}

/** An input text for a message: JSON-quoted (control characters visible), cut at 100 characters. */
function quoteForReport(text: string): string {
  return JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);
}
