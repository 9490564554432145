import { describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { signalStopper } from '../../src/host/process-guards.ts';

describe('signalStopper', () => {
  test('stops once and exits 0; a second signal while stopping does nothing', async () => {
    const exits: number[] = [];
    let stops = 0;
    let release!: () => void;
    const onSignal = signalStopper(
      () => {
        stops++;
        return new Promise<void>((r) => (release = r));
      },
      (code) => void exits.push(code),
      () => {},
    );
    const first = onSignal();
    await onSignal();
    release();
    await first;
    expect(stops).toBe(1);
    expect(exits).toEqual([0]);
  });

  test('a stop that fails still exits, with 1 and one line naming why', async () => {
    const exits: number[] = [];
    const lines: string[] = [];
    const onSignal = signalStopper(
      async () => {
        throw new Error('database is locked');
      },
      (code) => void exits.push(code),
      (l) => lines.push(l),
    );
    await onSignal(); // resolves: nothing left unhandled
    expect(exits).toEqual([1]);
    expect(lines).toEqual(['ipintel: stopping failed, exiting anyway: database is locked']);
  });
});
