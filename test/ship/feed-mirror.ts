/**
 * A feed mirror on 127.0.0.1 for updater tests: serves a feeds folder (the real snapshots by default) by
 * path (the layout `--mirror` expects), with per-path overrides that answer
 * what a test needs (a 404, a truncated file, garbage, a shrunken list).
 */
import { join, normalize } from 'node:path';
import { FEEDS_DIR } from '../helpers/recording-sink.ts';

export interface FeedMirror {
  url: string;
  /** Path (as in the catalog) -> the response to give instead of the snapshot. */
  overrides: Map<string, () => Response>;
  /** Paths requested so far, in order. */
  requests: string[];
  stop(): void;
}

/** Starts the mirror on a free loopback port; a path is served from the first of `roots` that holds it. */
export function startFeedMirror(roots: string | string[] = FEEDS_DIR): FeedMirror {
  const folders = typeof roots === 'string' ? [roots] : roots;
  const overrides = new Map<string, () => Response>();
  const requests: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = decodeURIComponent(new URL(req.url).pathname).replace(/^\/+/, '');
      requests.push(path);
      const override = overrides.get(path);
      if (override) return override();
      if (normalize(path).startsWith('..')) return new Response('bad path', { status: 400 });
      for (const root of folders) {
        const file = Bun.file(join(root, path));
        if (await file.exists()) return new Response(file);
      }
      return new Response('not found', { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/`, overrides, requests, stop: () => server.stop(true) };
}

/** The text of a snapshot file (not gzipped ones). */
export async function snapshotText(path: string): Promise<string> {
  return Bun.file(join(FEEDS_DIR, path)).text();
}
