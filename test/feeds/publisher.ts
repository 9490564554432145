/**
 * A feed publisher on 127.0.0.1 for refresher tests: serves copies of
 * feed files of test/fixtures/feeds (copied to a temp folder at test time) with ETag and
 * Last-Modified, answers 304 to matching conditional requests, and counts
 * what it sent. A test switches one path to a 404, a truncated body, an
 * error page, or a request that never gets an answer.
 */
import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FIXTURE_FEEDS_DIR } from '../helpers/fixture-index.ts';

export type Mode = 'ok' | '404' | 'truncated' | 'html' | 'hang';

export interface Publisher {
  url: string;
  root: string;
  /** Per path: full bodies sent (200) and 304s. */
  sent: Map<string, number>;
  notModified: Map<string, number>;
  modes: Map<string, Mode>;
  /** Every answer waits this long first (a slow publisher). */
  delayMs: number;
  stop(): void;
}

/** Copies `paths` from the fixture feeds into `root` and serves them. */
export function startPublisher(root: string, paths: string[]): Publisher {
  for (const p of paths) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    copyFileSync(join(FIXTURE_FEEDS_DIR, p), join(root, p));
  }
  const sent = new Map<string, number>();
  const notModified = new Map<string, number>();
  const modes = new Map<string, Mode>();
  const bump = (m: Map<string, number>, p: string) => m.set(p, (m.get(p) ?? 0) + 1);
  const publisher = { url: '', root, sent, notModified, modes, delayMs: 0, stop: () => server.stop(true) };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname.replace(/^\/+/, '');
      const mode = modes.get(path) ?? 'ok';
      if (publisher.delayMs > 0) await Bun.sleep(publisher.delayMs);
      if (mode === 'hang') return new Promise<Response>(() => {});
      if (mode === '404') return new Response('not found', { status: 404 });
      if (mode === 'html') return new Response('<html><body>Service unavailable</body></html>\n', { headers: { 'content-type': 'text/html' } });
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(root, path));
      } catch {
        return new Response('not found', { status: 404 });
      }
      if (mode === 'truncated') return new Response(bytes.subarray(0, Math.floor(bytes.length / 3)));
      const etag = `"${Bun.hash(bytes).toString(16)}"`;
      const lastModified = statSync(join(root, path)).mtime.toUTCString();
      if (req.headers.get('if-none-match') === etag) {
        bump(notModified, path);
        return new Response(null, { status: 304, headers: { etag } });
      }
      bump(sent, path);
      return new Response(bytes, { headers: { etag, 'last-modified': lastModified } });
    },
  });
  publisher.url = `http://127.0.0.1:${server.port}/`;
  return publisher;
}

/** A catalog file with the real entries of feeds/catalog.json for `paths`, each URL pointing at `base`. */
export function writeTestCatalog(file: string, paths: string[], base: string): void {
  const all = JSON.parse(readFileSync(join(import.meta.dir, '../../feeds/catalog.json'), 'utf8')).feeds as Array<{ path: string; url: string }>;
  const feeds = paths.map((p) => {
    const f = all.find((x) => x.path === p);
    if (!f) throw new Error(`${p} is not in feeds/catalog.json`);
    return { ...f, url: new URL(p, base).toString() };
  });
  writeFileSync(file, JSON.stringify({ feeds }));
}

/** Refresher options of the tests: the feeds only, small download limits, no retries or pickups during a test. */
export const TEST_REFRESH = {
  withDefaults: false,
  limits: { timeoutMs: 5_000, maxBytes: 64 * 1048576, connectTimeoutMs: 1_000 },
  retryBaseMs: 60_000,
  pickupMs: 60_000,
} as const;
