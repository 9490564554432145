/**
 * A process that writes the accounts database as fast as it can, for the
 * crash tests to SIGKILL at any point: each round grants a key through the
 * same AccountStore path as `bun run keys create`, counts usage on earlier
 * keys and flushes it. After every commit it reports on stdout (written
 * synchronously, so a reported commit really happened before the kill):
 *   key <id> <secret>      a key whose transaction committed
 *   usage <total>          usage units committed so far
 * Usage: IPINTEL_DB=<file> bun tools/soak/key-loop.ts [rounds]
 */
import { writeSync } from 'node:fs';
import { openAccounts } from '../../src/accounts/store.ts';

const dbPath = process.env.IPINTEL_DB;
if (!dbPath) {
  console.error('IPINTEL_DB is required');
  process.exit(2);
}
const rounds = Number(process.argv[2] ?? 100_000);
const store = await openAccounts(dbPath, { flushIntervalMs: 0, syncIntervalMs: 0 });
const say = (line: string) => writeSync(1, line + '\n');
say('ready');
const keyIds: string[] = [];
let usage = 0;
for (let i = 0; i < rounds; i++) {
  const { created } = await store.grantKeyByEmail(`crash-${process.pid}-${i % 5}@example.test`, i % 4 === 0 ? 'pro' : 'free', `crash key ${i}`);
  keyIds.push(created.key.id);
  say(`key ${created.key.id} ${created.secret}`);
  for (let u = 0; u < 20; u++) store.recordUsage(keyIds[(i * 7 + u) % keyIds.length]);
  await store.flush();
  usage += 20;
  say(`usage ${usage}`);
}
await store.close();
