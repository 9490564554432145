/**
 * Splitting one CSV record (RFC 4180 quoting) into fields. Feeds here keep
 * each record on one line, so a line-at-a-time splitter suffices.
 */

/**
 * The fields of one CSV line; `"` quotes fields, `""` is a literal quote, and
 * spaces before an opening quote are tolerated (`51447, "Name, NL"`).
 * Returns null when a quote is left open or text follows a closing quote.
 */
export function splitCsvLine(line: string): string[] | null {
  // Fast path: most lines of big feeds have no quotes at all.
  if (line.indexOf('"') < 0) return line.split(',');
  const out: string[] = [];
  let i = 0;
  const n = line.length;
  for (;;) {
    let j = i;
    while (j < n && line.charCodeAt(j) === 32) j++;
    if (j < n && line.charCodeAt(j) === 34) {
      let field = '';
      let k = j + 1;
      for (;;) {
        const q = line.indexOf('"', k);
        if (q < 0) return null; // unterminated quote
        field += line.slice(k, q);
        if (line.charCodeAt(q + 1) === 34) {
          field += '"';
          k = q + 2;
          continue;
        }
        k = q + 1;
        break;
      }
      while (k < n && line.charCodeAt(k) === 32) k++;
      out.push(field);
      if (k === n) return out;
      if (line.charCodeAt(k) !== 44) return null; // text after the closing quote
      i = k + 1;
    } else {
      const c = line.indexOf(',', i);
      if (c < 0) {
        out.push(line.slice(i));
        return out;
      }
      out.push(line.slice(i, c));
      i = c + 1;
    }
  }
}
