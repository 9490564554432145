/**
 * Records the answer corpus (test/helpers/answer-corpus.ts): every corpus
 * request sent to a server over the fixture index at the corpus clock, twice,
 * and the recording written only when both passes agree (a request whose
 * answer varies between passes cannot be a property of the code).
 *
 *   bun tools/record-answer-corpus.ts
 *
 * Run it only on a commit whose answers are the reference: the test then
 * holds every later commit to them.
 */
import { writeFileSync, renameSync } from 'node:fs';
import { answerOf, corpusBytes, corpusRequests, CORPUS_PATH, startCorpusServer, type CorpusEntry } from '../test/helpers/answer-corpus.ts';

const server = await startCorpusServer();
try {
  const requests = corpusRequests();
  const passes: CorpusEntry[][] = [];
  for (let pass = 0; pass < 2; pass++) {
    const entries: CorpusEntry[] = [];
    for (const request of requests) entries.push({ request, answer: await answerOf(server.url, request) });
    passes.push(entries);
  }
  const unstable = passes[0].filter((e, i) => JSON.stringify(e.answer) !== JSON.stringify(passes[1][i].answer));
  if (unstable.length > 0) {
    for (const e of unstable) console.error(`varies between passes: ${e.request.method} ${e.request.path}`);
    process.exit(1);
  }
  const tmp = `${CORPUS_PATH}.tmp`;
  writeFileSync(tmp, corpusBytes(passes[0]));
  renameSync(tmp, CORPUS_PATH);
  const statuses = new Map<number, number>();
  for (const e of passes[0]) statuses.set(e.answer.status, (statuses.get(e.answer.status) ?? 0) + 1);
  console.log(`recorded ${passes[0].length} answers to ${CORPUS_PATH} (${[...statuses].map(([s, n]) => `${n}x${s}`).join(', ')})`);
} finally {
  await server.stop();
}
