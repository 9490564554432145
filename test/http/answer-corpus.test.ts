/**
 * Every answer of the recorded corpus (test/helpers/answer-corpus.ts) is
 * given again, byte for byte: status, headers (Date aside; a media type's
 * parameters compared without the optional space after ";") and body. A
 * change meant to alter answers records the corpus again
 * (`bun tools/record-answer-corpus.ts`) and says why in its commit.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import type { RunningServer } from '../../src/host/start-server.ts';
import { answerOf, COMPARED_AS_JSON, corpusRequests, readCorpus, startCorpusServer, type CorpusAnswer } from '../helpers/answer-corpus.ts';

/** A header as compared: the media type's parameter spacing is not part of the answer's meaning. */
const comparable = (a: CorpusAnswer) => ({
  status: a.status,
  headers: a.headers.map(([k, v]) => [k, k === 'content-type' ? v.replace(/;\s*/g, ';') : v]),
});

let server: RunningServer;
beforeAll(async () => {
  server = await startCorpusServer();
});
afterAll(() => server.stop());

describe('the recorded answer corpus', () => {
  const corpus = readCorpus();

  test('is the corpus the generator draws (a changed generator records again)', () => {
    expect(corpus.map((e) => e.request)).toEqual(corpusRequests());
    // Every kind of answer is in it: lookups, projections, legacy text, errors, methods, preflights.
    const statuses = new Set(corpus.map((e) => e.answer.status));
    for (const s of [200, 204, 400, 403, 404, 405]) expect(statuses.has(s)).toBe(true);
  });

  test('every answer is given again, byte for byte', async () => {
    const differing: string[] = [];
    for (const { request, answer: recorded } of corpus) {
      const now = await answerOf(server.url, request);
      const route = request.path.split('?')[0];
      const sameBody = COMPARED_AS_JSON.has(route) ? Bun.deepEquals(JSON.parse(now.body), JSON.parse(recorded.body)) : now.body === recorded.body;
      if (!sameBody || !Bun.deepEquals(comparable(now), comparable(recorded))) {
        differing.push(`${request.method} ${request.path}: ${JSON.stringify(comparable(now))} ${now.body.slice(0, 200)} — recorded ${JSON.stringify(comparable(recorded))} ${recorded.body.slice(0, 200)}`);
      }
    }
    expect(differing).toEqual([]);
  }, 60_000);
});
