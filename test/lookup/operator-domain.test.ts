/** Every operator name the index can hold for a crawler range has an official domain for the legacy detail text. */
import { expect, test, setDefaultTimeout } from 'bun:test';
setDefaultTimeout(60_000); // past Bun's 5 s default on a loaded machine (bunfig.toml says why not there)
import { CRAWLER_FAMILIES } from '../../src/crawlers/registry.ts';
import { operatorDomain } from '../../src/lookup/operator-domain.ts';

test("every crawler registry owner (the operator of its official ranges) has an official domain", () => {
  const missing = [...new Set(CRAWLER_FAMILIES.map((f) => f.provider))].filter((owner) => operatorDomain(owner) === null);
  expect(missing).toEqual([]);
});
