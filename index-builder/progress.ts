/**
 * Build progress on stderr: a progress bar over sources on a terminal
 * (cli-progress), one plain line per step otherwise (CI logs). The final
 * summary table is summary.ts's.
 */
import cliProgress from 'cli-progress';

export interface BuildProgress {
  start(total: number): void;
  source(index: number, label: string): void;
  phase(label: string): void;
  stop(): void;
}

/** A reporter suited to where stderr goes; `quiet` prints nothing. */
export function createProgress(quiet = false): BuildProgress {
  if (quiet) return { start() {}, source() {}, phase() {}, stop() {} };
  if (!process.stderr.isTTY) {
    let total = 0;
    const t0 = performance.now();
    const at = () => `${((performance.now() - t0) / 1000).toFixed(1)}s`;
    return {
      start: (t) => {
        total = t;
      },
      source: (i, label) => console.error(`[${i + 1}/${total}] ${at()} ${label}`),
      phase: (label) => console.error(`... ${at()} ${label}`),
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { format: 'building index [{bar}] {value}/{total} | {step}', hideCursor: true, stream: process.stderr, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  return {
    start: (t) => bar.start(t, 0, { step: 'starting' }),
    source: (i, label) => bar.update(i, { step: label }),
    phase: (label) => bar.update({ step: label }),
    stop: () => {
      bar.update(bar.getTotal(), { step: 'done' });
      bar.stop();
    },
  };
}
