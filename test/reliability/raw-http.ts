/** Raw HTTP/1.1 over a loopback socket, for requests fetch cannot make (any Host, malformed bytes). */

/**
 * Sends `raw`, returns everything the server wrote before closing (or what
 * arrived within `waitMs`: a server still waiting for a promised body).
 */
export function rawRequest(port: number, raw: string, waitMs = 3_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    let done = false;
    const finish = (socket: { end(): void } | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket?.end();
      resolve(received);
    };
    let sock: { end(): void } | null = null;
    const timer = setTimeout(() => finish(sock), waitMs);
    Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open(s) {
          sock = s;
          s.write(raw);
        },
        data(_s, chunk) {
          received += new TextDecoder().decode(chunk);
        },
        close() {
          finish(null);
        },
        error(_s, e) {
          if (!done) reject(e);
        },
      },
    }).catch(reject);
  });
}

/** The status of the first response line, or null when there is none. */
export function statusOf(response: string): number | null {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(response);
  return m ? Number(m[1]) : null;
}

/** The body after the header block (identity or chunked encoding). */
export function bodyOf(response: string): string {
  const at = response.indexOf('\r\n\r\n');
  if (at < 0) return '';
  const head = response.slice(0, at).toLowerCase();
  let body = response.slice(at + 4);
  if (/\r\ntransfer-encoding:\s*chunked/.test(head)) {
    let out = '';
    for (;;) {
      const nl = body.indexOf('\r\n');
      const size = parseInt(body.slice(0, nl), 16);
      if (!(size > 0)) break;
      out += body.slice(nl + 2, nl + 2 + size);
      body = body.slice(nl + 2 + size + 2);
    }
    body = out;
  }
  return body;
}
