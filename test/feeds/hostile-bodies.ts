/**
 * Hostile feed bodies for tests and the hostile-feeds bench, each streamed
 * (generated chunk by chunk, never held whole): a gzip bomb, the same as a
 * Content-Encoding, a huge JSON document and a list of 10 M /128 lines.
 */
import { gzipSync } from 'node:zlib';

/** A body sent chunk by chunk from `next` (null ends it). */
export function streamed(next: () => Uint8Array | null, headers: Record<string, string> = {}): Response {
  return new Response(
    new ReadableStream({
      pull(controller) {
        const chunk = next();
        if (chunk === null) controller.close();
        else controller.enqueue(chunk);
      },
    }),
    { headers },
  );
}

/** One gzip member of 65 536 lines of 1000 bytes (`line` padded), inflating about 475:1. */
function bombMember(prefix: string): Uint8Array {
  return gzipSync(Buffer.from(`${prefix}${'A'.repeat(999 - prefix.length)}\n`.repeat(65536)), { level: 9 });
}

/** A gzip bomb of about `bytes` on the wire (members repeated) whose lines start with `prefix` (a comment for the feed's format). */
export function gzipBomb(bytes: number, prefix: string): { response: (headers?: Record<string, string>) => Response; wireBytes: number; inflatedBytes: number } {
  const member = bombMember(prefix);
  const members = Math.ceil(bytes / member.length);
  return {
    response(headers = {}) {
      let sent = 0;
      return streamed(() => (sent++ < members ? member : null), headers);
    },
    wireBytes: members * member.length,
    inflatedBytes: members * 65_536_000,
  };
}

/** A JSON crawler document of about `bytes`, streamed; `sent()` counts the chunks pulled. */
export function hugeJson(bytes: number): { response: () => Response; chunks: number; sent: () => number } {
  const chunk = new TextEncoder().encode(`{"ipv4Prefix":"66.249.64.0/27"},`.repeat(32768));
  const chunks = Math.ceil(bytes / chunk.length);
  let sent = 0;
  return {
    response() {
      sent = 0;
      return streamed(() => (sent === 0 ? (sent++, new TextEncoder().encode('{"prefixes":[')) : sent++ <= chunks ? chunk : null));
    },
    chunks,
    sent: () => sent,
  };
}

/** `count` distinct IPv6 /128 lines (2001:db8::/32), streamed; `sent()` counts the lines pulled. */
export function hostLines(count: number): { response: () => Response; sent: () => number } {
  let n = 0;
  const enc = new TextEncoder();
  return {
    response() {
      n = 0;
      return streamed(() => {
        if (n >= count) return null;
        let s = '';
        for (let i = 0; i < 20_000 && n < count; i++, n++) s += `2001:db8:${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}::1/128\n`;
        return enc.encode(s);
      });
    },
    sent: () => n,
  };
}
