/**
 * Secret material: API keys and session ids. Pure helpers; only hashes
 * of secrets ever reach the database. Web Crypto and Bun's hashes only:
 * node:crypto is a costly module to load in every worker thread at start
 * (BENCHMARKS.md, Start-up).
 */

/** Recognisable prefix of every API key (helps secret scanners). */
export const API_KEY_PREFIX = 'ipi_';
/** Characters after `ipi_` kept for display. */
const DISPLAY_CHARS = 8;
/** 32 random bytes in base64url are 43 characters. */
const API_KEY_PATTERN = /^ipi_[A-Za-z0-9_-]{43}$/;

/** A fresh API key: `ipi_` + 32 random bytes, base64url. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBase64url(32);
}

/** A fresh session id: 32 random bytes, base64url. */
export function generateSessionId(): string {
  return randomBase64url(32);
}

/** `n` bytes from the system's CSPRNG, base64url. */
function randomBase64url(n: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(n))).toString('base64url');
}

/** Whether a string has the shape of an API key (cheap pre-check before hashing). */
export function isApiKeyShaped(raw: string): boolean {
  return raw.length === API_KEY_PREFIX.length + 43 && API_KEY_PATTERN.test(raw);
}

/** The non-secret display prefix of a key, e.g. `ipi_AbCdEfGh`. */
export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + DISPLAY_CHARS);
}

/** SHA-256 hex of a secret: what the database stores (Bun's one-shot hash, cheaper than a node:crypto Hash object: it runs on every keyed request). */
export function hashSecret(secret: string): string {
  return Bun.SHA256.hash(secret, 'hex');
}

/** Constant-time string equality (length is not secret here): every code unit is compared, whatever differs first. */
export function secretsEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
