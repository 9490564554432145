/** The soak report as text: what an operator reads, and what BENCHMARKS.md records. */
import type { SoakReport } from './run-soak.ts';

const mib = (kib: number) => (Number.isFinite(kib) ? `${(kib / 1024).toFixed(1)} MiB` : 'n/a');

/** A human summary of a soak report (verdict last). */
export function formatSoakSummary(r: SoakReport): string {
  const o = r.options;
  const lines: string[] = [];
  lines.push(`soak: ${(r.elapsedMs / 1000).toFixed(1)} s, concurrency ${o.concurrency}, reload every ${o.reloadEveryMs / 1000} s, seed ${o.seed}`);
  lines.push(`requests      ${r.requests} (${Math.round(r.requests / (r.elapsedMs / 1000))}/s)`);
  lines.push(`by status     ${Object.entries(r.byStatus).sort().map(([s, n]) => `${s}: ${n}`).join(', ')}`);
  lines.push(`5xx           ${r.serverErrors}`);
  lines.push(`dropped       ${r.dropped}`);
  lines.push(`unexpected    ${r.unexpected} (status outside what the request may get)`);
  lines.push(`wrong answers ${r.wrongAnswers}`);
  lines.push(`verify        ${Object.entries(r.verifyStatuses).sort().map(([s, n]) => `${s}: ${n}`).join(', ')}`);
  lines.push(`latency       p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, max ${r.latencyMs.max} ms (client side, concurrency ${o.concurrency}; informative only)`);
  lines.push(`reloads       ${r.reloads.ok} ok, ${r.reloads.failed} failed (last generation ${r.reloads.lastGeneration})`);
  lines.push(
    `RSS           first ${mib(r.rss.firstKiB)}, last ${mib(r.rss.lastKiB)}, max ${mib(r.rss.maxKiB)}; ` +
      (r.rss.judged
        ? `\n              steady-state median, first third -> last third: total ${mib(r.rss.totalEarlyKiB)} -> ${mib(r.rss.totalLateKiB)} (${mib(r.rss.totalGrowthKiB)}), ` +
          `anon ${mib(r.rss.anonEarlyKiB)} -> ${mib(r.rss.anonLateKiB)} (${mib(r.rss.anonGrowthKiB)}); limit ${mib(r.rss.limitKiB)} each` +
          `\n              index files mapped at once: up to ${r.rss.maxMappedIndexes}`
        : 'too short to judge growth'),
  );
  lines.push('by kind:');
  for (const [kind, counts] of Object.entries(r.byKind).sort()) {
    lines.push(`  ${kind.padEnd(18)} ${Object.entries(counts).sort().map(([s, n]) => `${s}: ${n}`).join(', ')}`);
  }
  for (const [what, list] of Object.entries(r.samples)) for (const s of list) lines.push(`  ${what}: ${s}`);
  for (const f of r.reloads.failures) lines.push(`  reload failure: ${f}`);
  lines.push(r.failures.length === 0 ? 'PASS: zero 5xx, zero dropped, RSS flat' : `FAIL:\n  ${r.failures.join('\n  ')}`);
  if (r.failures.length > 0 && r.childStderrTail.length > 0) lines.push(`server stderr (tail):\n  ${r.childStderrTail.join('\n  ')}`);
  return lines.join('\n');
}
