/**
 * `bun run inspect <file> [ip...]`: prints an index file's header, sources
 * and counts, and for each IP the interval it falls in and its raw record.
 */
import { IndexFileError } from '../index/map-index-file.ts';
import { IndexReader } from '../index/reader.ts';
import { FLAG_NAMES } from '../index/record.ts';
import { formatTable } from '../../index-builder/index.ts';

/** Names of the set flag bits. */
function flagNames(flags: number): string[] {
  const out: string[] = [];
  for (let bit = 1; bit !== 0 && bit <= flags; bit <<= 1) if (flags & bit) out.push(FLAG_NAMES[bit] ?? `bit${Math.log2(bit)}`);
  return out;
}

/** Runs the inspector; returns the exit code. */
export function main(argv: string[]): number {
  const [file, ...ips] = argv;
  if (!file) {
    console.error('usage: bun run inspect <index-file> [ip ...]');
    return 2;
  }
  let reader: IndexReader;
  try {
    reader = IndexReader.open(file);
  } catch (e) {
    console.error(e instanceof IndexFileError ? e.message : String(e));
    return 1;
  }
  const m = reader.meta;
  console.log(`file:     ${file} (${(reader.file.sizeBytes / 1048576).toFixed(1)} MiB)`);
  console.log(`format:   version ${m.formatVersion}, built ${m.builtAt} by ${m.builder}`);
  console.log(`counts:   ${m.counts.v4Intervals} IPv4 intervals, ${m.counts.v6Intervals} IPv6 intervals, ${m.counts.records} records, ${m.counts.strings} strings, ${m.counts.asnDetails} ASNs`);
  console.log(`rpki:     ${m.hasRpki ? 'VRPs loaded' : 'no VRPs (status unknown)'}`);
  console.log(`capabilities: ${Object.entries(m.capabilities).filter(([, v]) => v).map(([k]) => k).join(', ')}`);
  console.log('sections:');
  console.log(formatTable(['tag', 'offset', 'bytes'], [...reader.file.sections.values()].map((s) => [s.tag, s.offset, s.length])));
  console.log('sources:');
  console.log(
    formatTable(
      ['path', 'type', 'rows', 'skipped', 'sha256'],
      m.sources.map((s) => [s.path, s.type, s.rows, s.skipped, s.sha256.slice(0, 16)]),
    ),
  );
  for (const ip of ips) {
    const hit = reader.lookup(ip);
    if (!hit) {
      console.log(`\n${ip}: not an IP address`);
      continue;
    }
    console.log(`\n${hit.ip} (IPv${hit.family}) in ${hit.rangeStart} - ${hit.rangeEnd}, record ${hit.recordId}`);
    console.log(`flags: ${flagNames(hit.record.flags).join(', ') || '-'}`);
    console.log(JSON.stringify(hit.record, null, 2));
    if (hit.record.asn) console.log(`asn details: ${JSON.stringify(reader.asnDetails(hit.record.asn.asn))}`);
  }
  return 0;
}
