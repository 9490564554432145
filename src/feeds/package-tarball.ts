/**
 * Unpacking named files from an npm package tarball (.tgz) that is hostile
 * until proven otherwise. Every entry is checked, not only the wanted ones:
 * a path with `..`, an absolute path, a link, a device or anything else but
 * a plain file or folder refuses the whole tarball. Only the wanted files
 * (`package/<file>`) are written, each with fsync, within a size bound.
 * tar-stream parses the format; the policy is ours.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract, type Header } from 'tar-stream';

/** Why a tarball was refused (the entry and the rule it broke). */
export class TarballRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TarballRefusedError';
  }
}

/** The reason an entry refuses the tarball, or null when it is a plain file or folder inside it. */
export function entryRefusal(header: Pick<Header, 'name' | 'type'>): string | null {
  const name = header.name;
  if (header.type !== 'file' && header.type !== 'directory') return `entry ${JSON.stringify(name)} is a ${header.type ?? 'entry of unknown type'}, not a plain file`;
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return `entry ${JSON.stringify(name)} has an absolute path`;
  if (name.split(/[/\\]/).includes('..')) return `entry ${JSON.stringify(name)} has a '..' in its path`;
  if (name.includes('\0')) return `entry ${JSON.stringify(name)} has a NUL in its path`;
  return null;
}

/**
 * Writes the wanted files of the package tarball `tgz` (entries
 * `package/<file>`) into `destDir` (which must exist). Throws
 * TarballRefusedError, naming the entry, on any refused entry, a wanted file
 * missing or twice, or more than `maxBytes` to write; the caller removes
 * `destDir` then (files may have been written before the bad entry).
 */
export async function unpackPackageFiles(tgz: string, destDir: string, files: readonly string[], maxBytes: number): Promise<void> {
  const wanted = new Set(files);
  const written = new Set<string>();
  let total = 0;
  const parser = extract();
  const consume = (async () => {
    for await (const entry of parser) {
      const header = entry.header;
      const refusal = entryRefusal(header);
      if (refusal) throw new TarballRefusedError(refusal);
      const file = header.type === 'file' && header.name.startsWith('package/') ? header.name.slice('package/'.length) : null;
      if (file === null || !wanted.has(file)) {
        entry.resume();
        await new Promise<void>((resolve, reject) => entry.on('end', resolve).on('error', reject));
        continue;
      }
      if (written.has(file)) throw new TarballRefusedError(`entry "package/${file}" appears twice`);
      total += header.size ?? 0;
      if (total > maxBytes) throw new TarballRefusedError(`the wanted files are larger than ${maxBytes} bytes (at "package/${file}")`);
      written.add(file);
      const out = await open(join(destDir, file), 'wx', 0o644);
      try {
        let bytes = 0;
        for await (const chunk of entry as AsyncIterable<Uint8Array>) {
          bytes += chunk.byteLength;
          if (bytes > (header.size ?? 0)) throw new TarballRefusedError(`entry "package/${file}" is longer than its header says`);
          await out.write(chunk);
        }
        await out.sync();
      } finally {
        await out.close();
      }
    }
  })();
  try {
    await Promise.all([pipeline(createReadStream(tgz), createGunzip(), parser), consume]);
  } catch (e) {
    parser.destroy();
    await consume.catch(() => {});
    if (e instanceof TarballRefusedError) throw e;
    throw new TarballRefusedError(`not a readable .tgz: ${(e as Error).message}`);
  }
  const missing = files.filter((f) => !written.has(f));
  if (missing.length > 0) throw new TarballRefusedError(`missing ${missing.map((f) => `"package/${f}"`).join(', ')}`);
}
