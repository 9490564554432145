/**
 * Regenerates src/rdap/bootstrap-data.json from IANA's RDAP bootstrap files.
 *
 *   bun run tools/refresh-rdap-bootstrap.ts [--out FILE] [SOURCE...]
 *
 * A SOURCE is a JSON file, a directory (its ipv4.json, ipv6.json, asn.json
 * or *bootstrap*{ipv4,ipv6,asn}.json files are used) or an http(s) URL.
 * Without sources the current files are fetched from IANA. The output is written atomically (temp file,
 * fsync, rename) so a server never reads a half-written table.
 */
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { buildBootstrapData } from '../src/rdap/bootstrap-build.ts';

const IANA_URLS = ['https://data.iana.org/rdap/ipv4.json', 'https://data.iana.org/rdap/ipv6.json', 'https://data.iana.org/rdap/asn.json'];
const DEFAULT_OUT = resolve(import.meta.dir, '../src/rdap/bootstrap-data.json');

/** Expands a directory into its ip/asn bootstrap files; other sources pass through. */
function expandSource(source: string): string[] {
  if (/^https?:\/\//i.test(source)) return [source];
  if (statSync(source).isDirectory()) {
    return readdirSync(source)
      .filter((f) => /^(ipv4|ipv6|asn)\.json$/i.test(f) || /bootstrap.*(ipv4|ipv6|asn)\.json$/i.test(f))
      .sort()
      .map((f) => join(source, f));
  }
  return [source];
}

/** Reads one source as parsed JSON. */
async function load(source: string): Promise<unknown> {
  if (/^https?:\/\//i.test(source)) {
    const res = await fetch(source, { signal: AbortSignal.timeout(30_000) });
    if (!res.ok) throw new Error(`${source}: HTTP ${res.status}`);
    return res.json();
  }
  return JSON.parse(readFileSync(source, 'utf8'));
}

/** Writes text to path atomically: temp file in the same directory, fsync, rename, fsync of the directory. */
function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w', 0o644);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
  const dirFd = openSync(dirname(path), 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}

async function main(argv: string[]): Promise<void> {
  let out = DEFAULT_OUT;
  const sources: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out') out = resolve(argv[++i] ?? '');
    else sources.push(argv[i]);
  }
  const files = (sources.length ? sources : IANA_URLS).flatMap(expandSource);
  if (files.length === 0) throw new Error('no bootstrap files found in the given sources');
  const docs = await Promise.all(files.map(load));
  const data = buildBootstrapData(docs);
  writeAtomically(out, `${JSON.stringify(data, null, 1)}\n`);
  const counts = (['ipv4', 'ipv6', 'asn'] as const).map((k) => `${k}: ${Object.values(data[k]).flat().length}`);
  console.log(`wrote ${out} (${Object.keys(data.registries).join(', ')}; ${counts.join(', ')})`);
}

if (import.meta.main) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    console.error(`refresh-rdap-bootstrap: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
