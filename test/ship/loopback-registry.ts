/**
 * A stand-in npm registry on 127.0.0.1: serves given tarballs at their
 * registry paths (`/@scope/name/-/name-version.tgz`), or a handler's answer,
 * and records every path asked for.
 */
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';

export interface LoopbackRegistry {
  url: string;
  /** Paths requested, in order. */
  requests: string[];
  stop(): void;
}

/** Starts the registry; a path without a route answers 404. */
export function startLoopbackRegistry(routes: Record<string, Uint8Array | (() => Response)>): LoopbackRegistry {
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      requests.push(path);
      const route = routes[path];
      if (route === undefined) return new Response('not found', { status: 404 });
      return typeof route === 'function' ? route() : new Response(route, { headers: { 'content-type': 'application/octet-stream' } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => void server.stop(true) };
}

/** One tarball entry: a file by default; links name their target; devices and fifos have no body. */
export interface TarEntry {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'link' | 'character-device' | 'block-device' | 'fifo';
  content?: string | Uint8Array;
  linkname?: string;
}

/** A gzipped tarball of `entries`, built with tar-stream's packer (as an npm publisher would, or an attacker). */
export async function packTarball(entries: TarEntry[]): Promise<Uint8Array> {
  const packer = pack();
  const gzip = createGzip();
  const chunks: Buffer[] = [];
  gzip.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => gzip.on('end', resolve).on('error', reject));
  packer.pipe(gzip);
  for (const e of entries) {
    const type = e.type ?? 'file';
    const body = type === 'file' ? (typeof e.content === 'string' ? Buffer.from(e.content) : Buffer.from(e.content ?? '')) : undefined;
    await new Promise<void>((resolve, reject) => packer.entry({ name: e.name, type, linkname: e.linkname, mode: 0o644 }, body ?? Buffer.alloc(0), (err) => (err ? reject(err) : resolve())));
  }
  packer.finalize();
  await done;
  return new Uint8Array(Buffer.concat(chunks));
}

/** The npm integrity (`sha512-<base64>`) of bytes. */
export function integrityOf(bytes: Uint8Array): string {
  return `sha512-${new Bun.CryptoHasher('sha512').update(bytes).digest('base64')}`;
}
