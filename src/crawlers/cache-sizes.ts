/** How many DNS answers and crawler proofs the verifier holds by default, each (LRU): on its own, so the memory budget reads it without loading the verifier. */
export const DNS_CACHE_SIZE = 10_000;
