/**
 * Reading a child process's output line by line with a bound on a line: a
 * line longer than the cap (a stray print with no newline) is dropped
 * rather than buffered, so the reader holds at most one capped line.
 */

/** Default longest line kept, in characters. */
export const MAX_LINE_CHARS = 1 << 20;

/** Calls `each` with every non-empty line of a stream up to `maxLineChars`; longer lines are skipped whole. */
export async function readLines(stream: ReadableStream<Uint8Array>, each: (line: string) => void, maxLineChars = MAX_LINE_CHARS): Promise<void> {
  const decoder = new TextDecoder();
  let rest = '';
  let skipping = false;
  const take = (text: string) => {
    const lines = text.split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      if (skipping) skipping = false;
      else if (line && line.length <= maxLineChars) each(line);
    }
    if (rest.length > maxLineChars) {
      rest = '';
      skipping = true;
    }
  };
  for await (const chunk of stream) take(rest + decoder.decode(chunk, { stream: true }));
  take(rest + decoder.decode() + '\n');
}

/** The stream's last `maxChars` characters (whole, when shorter); the rest is read and dropped. */
export async function readTail(stream: ReadableStream<Uint8Array>, maxChars: number): Promise<string> {
  const decoder = new TextDecoder();
  let tail = '';
  for await (const chunk of stream) {
    tail += decoder.decode(chunk, { stream: true });
    if (tail.length > 2 * maxChars) tail = tail.slice(-maxChars);
  }
  tail += decoder.decode();
  return tail.slice(-maxChars);
}
