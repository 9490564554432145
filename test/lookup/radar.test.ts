/**
 * The radar client against real HTTP servers on 127.0.0.1 (issue 26 #4):
 * the operator's upstream quota is spent only within per-caller budgets,
 * answers are cached within a byte bound, an oversized body is a failure,
 * and the token never leaves the configured origin.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { createRadarClient } from '../../src/lookup/radar.ts';
import { RADAR_DEFAULTS } from '../../src/lookup/radar-defaults.ts';

interface Seen {
  path: string;
  auth: string | null;
}

let radar: ReturnType<typeof Bun.serve>;
let elsewhere: ReturnType<typeof Bun.serve>;
const seen: Seen[] = [];
const seenElsewhere: Seen[] = [];

beforeAll(() => {
  elsewhere = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      seenElsewhere.push({ path: new URL(req.url).pathname, auth: req.headers.get('authorization') });
      return Response.json({ result: { stolen: true } });
    },
  });
  radar = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      seen.push({ path, auth: req.headers.get('authorization') });
      const asn = Number(path.split('/').pop());
      if (asn === 302) return Response.redirect(`http://127.0.0.1:${elsewhere.port}/collect`, 302);
      if (asn === 5) {
        // 5 MiB of valid JSON without a Content-Length: the cap must hold while streaming.
        const enc = new TextEncoder();
        const chunk = enc.encode('x'.repeat(64 * 1024));
        let sent = 0;
        const body = new ReadableStream({
          pull(c) {
            if (sent === 0) c.enqueue(enc.encode('{"result":{"pad":"'));
            if (sent++ < 80) c.enqueue(chunk);
            else {
              c.enqueue(enc.encode('"}}'));
              c.close();
            }
          },
        });
        return new Response(body, { headers: { 'content-type': 'application/json' } });
      }
      return Response.json({ result: { asn, name: `AS-${asn}`, pad: 'p'.repeat(1000) } });
    },
  });
});
afterAll(() => {
  radar.stop(true);
  elsewhere.stop(true);
});

const url = () => `http://127.0.0.1:${radar.port}/asn`;

describe('radar client bounds', () => {
  test('each caller causes at most its budget of uncached calls; cached answers are free for everyone', async () => {
    seen.length = 0;
    const spent = new Map<string, number>();
    const budget = (caller: string) => {
      const n = (spent.get(caller) ?? 0) + 1;
      spent.set(caller, n);
      return n <= 10;
    };
    const client = createRadarClient({ url: url(), token: 't', budget });
    // Five callers, forty distinct ASNs each: two hundred uncached asks.
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, c) => Promise.all(Array.from({ length: 40 }, (_, i) => client.lookup(1000 + c * 40 + i, `ip:198.51.100.${c}`)))),
    );
    expect(seen).toHaveLength(50);
    expect(answers.flat().filter((a) => a !== null)).toHaveLength(50);
    // What was fetched is now cached: another caller with no budget left gets it without an upstream call.
    const fetched = seen.map((s) => Number(s.path.split('/').pop()));
    for (const asn of fetched) expect(await client.lookup(asn, 'ip:198.51.100.0')).toEqual(expect.objectContaining({ asn }));
    expect(seen).toHaveLength(50);
  });

  test('the cache is bounded by bytes: old answers go, the newest stay', async () => {
    seen.length = 0;
    const client = createRadarClient({ url: url(), token: 't', maxBytes: 20_000 });
    for (let asn = 1; asn <= 40; asn++) await client.lookup(100 + asn, 'ip:1');
    expect(seen).toHaveLength(40);
    await client.lookup(140, 'ip:1'); // newest: cached
    expect(seen).toHaveLength(40);
    await client.lookup(101, 'ip:1'); // oldest: evicted by the byte bound, asked again
    expect(seen).toHaveLength(41);
  });

  test('a body over the cap is a failure (radar null), read no further', async () => {
    const client = createRadarClient({ url: url(), token: 't' });
    expect(RADAR_DEFAULTS.maxBodyBytes).toBeLessThan(5 << 20);
    expect(await client.lookup(5, 'ip:1')).toBeNull();
  });

  test('a redirect is not followed: the token never reaches another origin', async () => {
    seenElsewhere.length = 0;
    const client = createRadarClient({ url: url(), token: 'operator-secret' });
    expect(await client.lookup(302, 'ip:1')).toBeNull();
    await Bun.sleep(50);
    expect(seenElsewhere).toEqual([]);
  });
});
