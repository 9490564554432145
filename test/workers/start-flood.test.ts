/**
 * A flood from the moment the port accepts (issue 36 #12): the real server
 * with two workers under `ulimit -n 256`, 400 connections opened to its
 * port from before it listens. Every worker has loaded its code before any
 * accepts, so the flood cannot starve a worker still reading its modules;
 * the host starts, and answers once the flood is gone. A worker that fails
 * to start is retried, never taking the host down (pool.ts; the killed-
 * worker test of pool.test.ts covers the restart itself).
 */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedTestPort } from '../helpers/fixed-port.ts';
import { spawnServer, type SpawnedServer } from '../helpers/spawned-server.ts';

const FLOOD = 400;

test(
  `2 workers, ulimit -n 256, ${FLOOD} connections from the moment the port accepts: the host starts and serves`,
  async () => {
    const port = fixedTestPort();
    // A database file: with :memory: the host serves with one worker.
    const dir = mkdtempSync(join(tmpdir(), 'ipintel-start-flood-'));
    const sockets: Array<{ end(): void }> = [];
    let flooding = true;
    // Connects as fast as the port lets it, from before the server starts, until FLOOD are open.
    const flood = (async () => {
      while (flooding && sockets.length < FLOOD) {
        const batch = Array.from({ length: Math.min(50, FLOOD - sockets.length) }, () =>
          Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {}, error() {}, close() {} } }).then(
            (s) => void sockets.push(s),
            () => Bun.sleep(1),
          ),
        );
        await Promise.all(batch);
      }
    })();
    let server: SpawnedServer | null = null;
    try {
      server = await spawnServer({ PORT: String(port), IPINTEL_WORKERS: '2', IPINTEL_DB: join(dir, 'accounts.sqlite') }, { shell: 'ulimit -n 256' });
      flooding = false;
      await flood;
      expect(sockets.length).toBeGreaterThan(0);
      expect(server.alive()).toBe(true);
      expect(server.log.some((l) => l.includes('2 workers'))).toBe(true);
      for (const s of sockets) s.end();
      // Bounded: once the flood's connections are closed, /health answers 200.
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(5_000) }).then(
          (r) => r.arrayBuffer().then(() => r.status),
          () => 0,
        );
        if (status !== 200) await Bun.sleep(100);
      }
      expect(status).toBe(200);
      expect(server.log.some((l) => /cannot start|EMFILE reading/.test(l))).toBe(false);
      expect(server.alive()).toBe(true);
    } finally {
      flooding = false;
      await flood;
      for (const s of sockets) s.end();
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
  120_000,
);
