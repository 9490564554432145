/**
 * Secret material: API keys and session ids. Pure helpers; only hashes
 * of secrets ever reach the database.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** Recognisable prefix of every API key (helps secret scanners). */
export const API_KEY_PREFIX = 'ipi_';
/** Characters after `ipi_` kept for display. */
const DISPLAY_CHARS = 8;
/** 32 random bytes in base64url are 43 characters. */
const API_KEY_PATTERN = /^ipi_[A-Za-z0-9_-]{43}$/;

/** A fresh API key: `ipi_` + 32 random bytes, base64url. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** A fresh session id: 32 random bytes, base64url. */
export function generateSessionId(): string {
  return randomBytes(32).toString('base64url');
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

/** Constant-time string equality (length is not secret here). */
export function secretsEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
