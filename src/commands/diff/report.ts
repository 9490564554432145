/** The text rendering of an index diff (`bun run diff --format text`). */
import type { ChangedSpaceBody, IndexDiffBody } from '../../contract/diff.ts';

const n = (x: number) => x.toLocaleString('en-US');
const space = (s: ChangedSpaceBody) => `${n(s.ipv4_addresses)} IPv4, ${n(s.ipv6_64s)} IPv6 /64`;
const value = (v: unknown) => (v === null ? '-' : String(v));

/** A readable report: one block per field group that changed, then the groups that did not. */
export function diffText(d: IndexDiffBody): string {
  const lines = [`${d.old.path} (built ${d.old.built_at}) -> ${d.new.path} (built ${d.new.built_at}), compared in ${d.seconds} s`];
  const unchanged: string[] = [];
  for (const f of d.fields) {
    if (f.changed.ipv4_addresses === 0 && f.changed.ipv6_64s === 0) {
      unchanged.push(f.field);
      continue;
    }
    lines.push('', `${f.field}: ${space(f.changed)} changed`);
    if (f.flagged && f.unflagged) lines.push(`  newly flagged ${space(f.flagged)}; unflagged ${space(f.unflagged)}`);
    for (const r of f.largest) lines.push(`  ${(r.cidr ?? r.range).padEnd(36)} ${n(r.size).padStart(13)} ${r.family === 4 ? 'addr' : '/64 '}  ${value(r.before)} -> ${value(r.after)}`);
  }
  lines.push('', unchanged.length === d.fields.length ? 'no changes' : `unchanged: ${unchanged.join(', ') || '-'}`);
  return `${lines.join('\n')}\n`;
}
