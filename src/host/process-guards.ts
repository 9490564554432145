/**
 * The serving process's last line of defence: an unhandled rejection or an
 * uncaught exception (a timer's task that forgot its catch) is logged and
 * the process keeps serving, rather than Bun's default of exiting. Every
 * task should catch its own errors; this only keeps a missed one from
 * taking the server down.
 */

/** Installs the handlers once per process or worker thread; `log` gets one line per event. */
export function installProcessGuards(log: (line: string) => void = (line) => console.error(line)): void {
  if ((globalThis as { __ipintelGuards?: boolean }).__ipintelGuards) return;
  (globalThis as { __ipintelGuards?: boolean }).__ipintelGuards = true;
  const describe = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.on('unhandledRejection', (reason) => log(`unhandled rejection (kept serving): ${describe(reason)}`));
  process.on('uncaughtException', (error) => log(`uncaught exception (kept serving): ${describe(error)}`));
}

/**
 * What SIGINT and SIGTERM run: `stop` once (a signal while stopping is
 * ignored), then exit 0; when stopping fails, one line and exit 1 rather
 * than a process left half stopped that no later signal would end.
 */
export function signalStopper(
  stop: () => Promise<void>,
  exit: (code: number) => void = (code) => process.exit(code),
  log: (line: string) => void = (line) => console.error(line),
): () => Promise<void> {
  let stopping = false;
  return async () => {
    if (stopping) return;
    stopping = true;
    try {
      await stop();
    } catch (e) {
      log(`ipintel: stopping failed, exiting anyway: ${(e as Error)?.message ?? String(e)}`);
      return exit(1);
    }
    exit(0);
  };
}
