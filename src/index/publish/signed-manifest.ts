/**
 * The manifest published beside an index (`ipintel.idx.json`): what the file
 * is (format version, sha256, size, build time, sources) and an ed25519
 * signature over those fields, so a pulling server can refuse a file nobody
 * with the signing key published. The signature covers the canonical JSON of
 * every field but `signature` (keys sorted), so the file may be re-indented.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** One source of the published index, with the date of its data. */
export interface PublishedSource {
  type: string;
  path: string;
  date: string | null;
}

/** The signed fields of a published index manifest. */
export interface PublishedManifestBody {
  /** The index file format version (src/index/format.ts). */
  format_version: number;
  /** Lower-case hex sha256 of the index file. */
  sha256: string;
  size: number;
  /** ISO 8601 build time from the index header. */
  built_at: string;
  /** The index's file name, relative to the manifest: a version kept under `versions/`, so a pull never races a newer publish. */
  file: string;
  sources: PublishedSource[];
}

/** A manifest as published: the body plus a base64 ed25519 signature over its canonical JSON. */
export interface PublishedManifest extends PublishedManifestBody {
  signature: string;
}

/** A manifest refused for its shape, size or signature. */
export class ManifestRefusal extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'ManifestRefusal';
  }
}

/** Largest manifest accepted (a few hundred sources fit in a fraction of it). */
export const MAX_MANIFEST_BYTES = 256 * 1024;

/** JSON with object keys sorted at every level: the bytes the signature covers. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The body's signed bytes. */
function signedBytes(body: PublishedManifestBody): Buffer {
  const { format_version, sha256, size, built_at, file, sources } = body;
  return Buffer.from(canonicalJson({ format_version, sha256, size, built_at, file, sources }));
}

/** Signs a manifest body with an ed25519 private key (PEM text or KeyObject). */
export function signManifest(body: PublishedManifestBody, privateKey: string | KeyObject): PublishedManifest {
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`the signing key is ${key.asymmetricKeyType}, not ed25519`);
  const signature = sign(null, signedBytes(body), key).toString('base64');
  return { ...body, signature };
}

/** A public key from its one-line form (base64 of the SPKI DER, as `index-keygen` writes it) or PEM. */
export function parsePublicKey(text: string): KeyObject {
  const trimmed = text.trim();
  let key: KeyObject;
  try {
    key = trimmed.startsWith('-----BEGIN')
      ? createPublicKey(trimmed)
      : createPublicKey({ key: Buffer.from(trimmed.replace(/^ed25519:/, ''), 'base64'), format: 'der', type: 'spki' });
  } catch (e) {
    throw new Error(`not an ed25519 public key: ${(e as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`the public key is ${key.asymmetricKeyType}, not ed25519`);
  return key;
}

/** The one-line text form of a public key. */
export function publicKeyLine(key: KeyObject): string {
  return `ed25519:${key.export({ format: 'der', type: 'spki' }).toString('base64')}`;
}

const HEX64 = /^[0-9a-f]{64}$/;
const SAFE_FILE = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)?$/;

/** Parses and checks the shape of manifest text, then verifies its signature with `publicKey`; throws ManifestRefusal. */
export function verifyManifest(text: string, publicKey: KeyObject): PublishedManifest {
  if (text.length > MAX_MANIFEST_BYTES) throw new ManifestRefusal(`manifest larger than ${MAX_MANIFEST_BYTES} bytes`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ManifestRefusal('manifest is not JSON');
  }
  const m = doc as Partial<PublishedManifest>;
  const shapeOk =
    m !== null &&
    typeof m === 'object' &&
    Number.isInteger(m.format_version) &&
    typeof m.sha256 === 'string' &&
    HEX64.test(m.sha256) &&
    Number.isSafeInteger(m.size) &&
    m.size! > 0 &&
    typeof m.built_at === 'string' &&
    Number.isFinite(Date.parse(m.built_at)) &&
    typeof m.file === 'string' &&
    SAFE_FILE.test(m.file) &&
    !m.file.split('/').includes('..') &&
    Array.isArray(m.sources) &&
    m.sources.every((s) => s && typeof s.type === 'string' && typeof s.path === 'string' && (s.date === null || typeof s.date === 'string')) &&
    typeof m.signature === 'string';
  if (!shapeOk) throw new ManifestRefusal('manifest fields are missing or malformed');
  let good = false;
  try {
    good = verify(null, signedBytes(m as PublishedManifest), publicKey, Buffer.from(m.signature!, 'base64'));
  } catch {
    good = false;
  }
  if (!good) throw new ManifestRefusal('manifest signature does not verify with the configured public key');
  return m as PublishedManifest;
}
