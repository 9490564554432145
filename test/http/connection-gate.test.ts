/** The connection gate's rules, with the descriptor count and the clock in the test's hands. */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { allocateConnectionCount, ConnectionGate, fixConnectionBaseline } from '../../src/http/connection-gate.ts';
import { currentDescriptorLimit, describeDescriptorLimit, openDescriptorCount, raiseDescriptorLimit } from '../../src/net/descriptor-limit.ts';

function gateWith(max: number, fds: { n: number }, clock: { t: number }, shared?: SharedArrayBuffer) {
  const warnings: string[] = [];
  const gate = new ConnectionGate({ max, quietMs: 35_000, openDescriptors: () => fds.n, now: () => clock.t, shared, warn: (l) => warnings.push(l) });
  return { gate, warnings };
}

/** A process whose descriptors are 39 plus its open connections; a connection's descriptor exists from before its first request. */
function host() {
  const fds = { n: 39 };
  const open = new Set<string>();
  return {
    fds,
    /** A new connection's first request (refused: the server closes it). */
    connect(gate: ConnectionGate, address: string, port: number): boolean {
      fds.n++;
      const ok = gate.admit(address, port);
      if (ok) open.add(`${address} ${port}`);
      else fds.n--;
      return ok;
    },
    close(address: string, port: number) {
      if (open.delete(`${address} ${port}`)) fds.n--;
    },
  };
}

test('known connections are always served; new ones only below the cap; refusals logged once per ten seconds', () => {
  const h = host();
  const clock = { t: 0 };
  const { gate, warnings } = gateWith(3, h.fds, clock);
  expect(h.connect(gate, '10.0.0.1', 1)).toBe(true);
  expect(h.connect(gate, '10.0.0.1', 2)).toBe(true);
  expect(h.connect(gate, '10.0.0.1', 3)).toBe(true);
  expect(h.connect(gate, '10.0.0.1', 4)).toBe(false); // counted since the sample: three open
  clock.t += 200;
  expect(h.connect(gate, '10.0.0.2', 1)).toBe(false); // a fresh count says the same
  expect(gate.admit('10.0.0.1', 2)).toBe(true); // known: served
  expect(gate.refused).toBe(2);
  expect(warnings).toHaveLength(1);
  // Two close: their descriptors go, and the next sample lets new connections in.
  h.close('10.0.0.1', 1);
  h.close('10.0.0.1', 3);
  clock.t += 200;
  expect(h.connect(gate, '10.0.0.2', 1)).toBe(true);
  expect(h.connect(gate, '10.0.0.2', 2)).toBe(true);
  expect(h.connect(gate, '10.0.0.2', 3)).toBe(false);
});

test('workers sharing one count: an admission by one is seen by the other at once', () => {
  const shared = allocateConnectionCount();
  const h = host();
  const clock = { t: 0 };
  const a = gateWith(2, h.fds, clock, shared).gate;
  const b = gateWith(2, h.fds, clock, shared).gate;
  expect(h.connect(a, '10.0.0.1', 1)).toBe(true);
  expect(h.connect(b, '10.0.0.1', 2)).toBe(true);
  expect(h.connect(a, '10.0.0.1', 3)).toBe(false);
  expect(h.connect(b, '10.0.0.1', 4)).toBe(false);
});

test('without a descriptor count, the known connections are the count, and quiet ones are forgotten', () => {
  const clock = { t: 0 };
  const gate = new ConnectionGate({ max: 2, quietMs: 1000, openDescriptors: () => null, now: () => clock.t, warn: () => {} });
  expect(gate.admit('a', 1)).toBe(true);
  expect(gate.admit('a', 2)).toBe(true);
  expect(gate.admit('a', 3)).toBe(false);
  clock.t += 1500;
  expect(gate.admit('a', 2)).toBe(true); // refreshes one
  expect(gate.admit('a', 3)).toBe(true); // the quiet one (port 1) was forgotten
});

test('the descriptor limit is read through libc, and raising it never lowers it', () => {
  const before = currentDescriptorLimit();
  expect(before.problem).toBeNull();
  expect(before.soft).toBeGreaterThan(0);
  expect(before.hard).toBeGreaterThanOrEqual(before.soft);
  const after = raiseDescriptorLimit();
  expect(after.soft).toBeGreaterThanOrEqual(before.soft);
  expect(describeDescriptorLimit(after)).toStartWith('descriptors: soft limit');
  expect(openDescriptorCount()).toBeGreaterThan(2);
});

test('a soft limit below the hard one is raised to it (a child started with ulimit -Sn 64)', () => {
  const script = `import { raiseDescriptorLimit, describeDescriptorLimit } from '${import.meta.dir}/../../src/net/descriptor-limit.ts';
const r = raiseDescriptorLimit(); console.log(JSON.stringify(r));`;
  // Bun raises its own soft limit at start; prlimit lowers it again inside the running child before the call.
  const r = Bun.spawnSync(['sh', '-c', `ulimit -Sn 64; exec "$@"`, 'sh', process.execPath, '-e', `const { execSync } = require('node:child_process'); execSync('prlimit --pid ' + process.pid + ' --nofile=64:'); ${script.replace(/\n/g, ' ')}`], { stdout: 'pipe', stderr: 'pipe' });
  const out = r.stdout.toString().trim();
  if (!out) throw new Error(r.stderr.toString());
  const limit = JSON.parse(out) as { soft: number; hard: number; before: number };
  expect(limit.before).toBe(64);
  expect(limit.soft).toBe(limit.hard);
});

test('far below the cap a request costs no peer read; from half the cap connections are told apart', () => {
  const h = host();
  const clock = { t: 0 };
  const { gate } = gateWith(10, h.fds, clock);
  let reads = 0;
  let port = 0;
  const peers = { requestIP: () => (reads++, { address: '10.0.0.9', port }) };
  const request = new Request('http://x/');
  // The first connection's request fixes the baseline; four connections open: below half the cap, requests pass on a counter.
  h.fds.n++;
  expect(gate.allows(request, peers)).toBe(true);
  h.fds.n += 3;
  for (let i = 0; i < 200; i++) expect(gate.allows(request, peers)).toBe(true);
  expect(reads).toBe(0);
  // Two more: the next sample (time, or the headroom of requests) turns tracking on.
  h.fds.n += 2;
  clock.t += 150;
  port = 1;
  h.fds.n++; // the asking connection
  expect(gate.allows(request, peers)).toBe(true);
  expect(reads).toBe(1);
  // Three more fill the cap; the next new one is refused, a known one served.
  for (port = 2; port <= 4; port++) {
    h.fds.n++;
    expect(gate.allows(request, peers)).toBe(true);
  }
  port = 5;
  expect(gate.allows(request, peers)).toBe(false);
  port = 2;
  expect(gate.allows(request, peers)).toBe(true);
});

test('a baseline fixed before any connection is not raised by files the host holds briefly at the first request', () => {
  const shared = allocateConnectionCount();
  const h = host(); // 39 descriptors of its own
  fixConnectionBaseline(shared, h.fds.n);
  const clock = { t: 0 };
  const { gate } = gateWith(3, h.fds, clock, shared);
  h.fds.n += 2; // the primary loading code as the first connection arrives
  expect(h.connect(gate, '10.0.0.1', 1)).toBe(true);
  h.fds.n -= 2; // those files closed again
  expect(h.connect(gate, '10.0.0.1', 2)).toBe(false); // counted too many while they were open: never too few
  clock.t += 200;
  expect(h.connect(gate, '10.0.0.1', 2)).toBe(true); // a fresh count: one open
  expect(h.connect(gate, '10.0.0.1', 3)).toBe(true);
  expect(h.connect(gate, '10.0.0.1', 4)).toBe(false);
  clock.t += 200;
  expect(h.connect(gate, '10.0.0.1', 4)).toBe(false); // a fresh count: three open, the cap holds
});

test('two workers racing for the last places of the shared count never admit past the cap (the count is reserved, not read and then added to)', async () => {
  const MAX = 64; // a sample sees half the cap open, so each round leaves MAX / 2 places
  const ROUNDS = 1500;
  const shared = allocateConnectionCount();
  fixConnectionBaseline(shared, 1000);
  // Two barriers a round: after both gates sampled (a gate's first sample resets the shared count), and after both admitted.
  const control = new SharedArrayBuffer(4);
  const source = `
    import { ConnectionGate } from ${JSON.stringify(new URL('../../src/http/connection-gate.ts', import.meta.url).pathname)};
    self.onmessage = (e) => {
      const { shared, control, id, rounds, max } = e.data;
      const arrived = new Int32Array(control);
      let barrier = 0;
      const together = () => { barrier++; Atomics.add(arrived, 0, 1); while (Atomics.load(arrived, 0) < 2 * barrier); };
      const peers = { requestIP: () => null };
      const admitted = [];
      for (let r = 0; r < rounds; r++) {
        const gate = new ConnectionGate({ max, quietMs: 35_000, openDescriptors: () => 1000 + 1 + max / 2, now: () => r, shared, workers: 2, warn: () => {} });
        gate.allows(null, peers); // the first sample: half the cap open, so the gate tells connections apart
        together();
        let n = 0;
        for (let port = 0; port < max; port++) if (gate.admit('10.0.' + id + '.1', port)) n++;
        admitted.push(n);
        together();
      }
      postMessage(admitted);
    };`;
  const url = URL.createObjectURL(new Blob([source], { type: 'application/typescript' }));
  const workers = [0, 1].map(() => new Worker(url));
  try {
    const [a, b] = await Promise.all(
      workers.map(
        (w, id) =>
          new Promise<number[]>((resolve, reject) => {
            w.onmessage = (e) => resolve(e.data as number[]);
            w.onerror = (e) => reject(new Error(e.message));
            w.postMessage({ shared, control, id, rounds: ROUNDS, max: MAX });
          }),
      ),
    );
    const totals = a!.map((n, r) => n + b![r]!);
    expect(totals.filter((t) => t > MAX / 2)).toEqual([]);
    expect(totals.every((t) => t === MAX / 2)).toBe(true);
  } finally {
    for (const w of workers) w.terminate();
  }
});
