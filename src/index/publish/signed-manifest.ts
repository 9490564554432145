/**
 * The manifest published beside an index (`ipintel.idx.json`): what the file
 * is (format version, sha256, size, build time, sources) and an ed25519
 * signature over those fields, so a pulling server can refuse a file nobody
 * with the signing key published. `signature` covers the canonical JSON (keys
 * sorted) of the six fields every puller knows, so the file may be re-indented
 * and pullers of any age verify it. The cheaper transfers (a zstd-compressed
 * copy, deltas from earlier versions, the publisher's history) are additive fields with a second
 * signature over every field but the two signatures: an older puller ignores
 * them, a newer one believes them only when that signature verifies.
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

/** The index compressed with zstd (a single frame), a transfer cheaper than the plain file. */
export interface CompressedTransfer {
  /** Relative to the manifest, like `file`. */
  file: string;
  format: 'zstd';
  /** Bytes of the compressed file and its lower-case hex sha256. */
  size: number;
  sha256: string;
}

/** A binary delta (VCDIFF, made by xdelta3) that turns the index `from_sha256` into this manifest's index. */
export interface DeltaTransfer {
  file: string;
  format: 'vcdiff';
  from_sha256: string;
  /** Always the manifest's own sha256: the only result believed. */
  to_sha256: string;
  size: number;
  sha256: string;
}

/** The publisher's history of published versions (src/index/history/history-manifest.ts): a JSON file under `history/`. */
export interface HistoryTransfer {
  file: string;
  format: 'ipintel-history-1';
  size: number;
  sha256: string;
}

/** The transfers besides the plain file, signed by `signature_all_fields`. */
export interface PublishedTransfers {
  compressed?: CompressedTransfer;
  deltas?: DeltaTransfer[];
  history?: HistoryTransfer;
}

/** A manifest as published: the body plus a base64 ed25519 signature over its canonical JSON. */
export interface PublishedManifest extends PublishedManifestBody, PublishedTransfers {
  signature: string;
  /** Over every field but the two signatures; present when the manifest lists transfers. */
  signature_all_fields?: string;
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

/** Every field but the signatures: the bytes `signature_all_fields` covers. */
function allFieldsBytes(manifest: object): Buffer {
  const { signature: _s, signature_all_fields: _a, ...rest } = manifest as PublishedManifest;
  return Buffer.from(canonicalJson(rest));
}

/** Signs a manifest body (and its transfers, when any) with an ed25519 private key (PEM text or KeyObject). */
export function signManifest(body: PublishedManifestBody & PublishedTransfers, privateKey: string | KeyObject): PublishedManifest {
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`the signing key is ${key.asymmetricKeyType}, not ed25519`);
  const signature = sign(null, signedBytes(body), key).toString('base64');
  if (body.compressed === undefined && body.deltas === undefined && body.history === undefined) return { ...body, signature };
  return { ...body, signature, signature_all_fields: sign(null, allFieldsBytes(body), key).toString('base64') };
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
  return withVerifiedTransfers(m as PublishedManifest, publicKey);
}

const isSize = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) > 0;
const isFile = (f: unknown): f is string => typeof f === 'string' && SAFE_FILE.test(f) && !f.split('/').includes('..');
const isHex = (h: unknown): h is string => typeof h === 'string' && HEX64.test(h);

/** Whether the transfer fields have the shapes this puller reads (a delta's result is always the manifest's file). */
function transfersWellFormed(m: PublishedManifest): boolean {
  const c = m.compressed;
  if (c !== undefined && !(c !== null && typeof c === 'object' && isFile(c.file) && c.format === 'zstd' && isSize(c.size) && isHex(c.sha256))) return false;
  const h = m.history;
  if (h !== undefined && !(h !== null && typeof h === 'object' && isFile(h.file) && h.format === 'ipintel-history-1' && isSize(h.size) && isHex(h.sha256))) return false;
  if (m.deltas === undefined) return true;
  return (
    Array.isArray(m.deltas) &&
    m.deltas.every(
      (d) => d !== null && typeof d === 'object' && isFile(d.file) && d.format === 'vcdiff' && isHex(d.from_sha256) && d.to_sha256 === m.sha256 && isSize(d.size) && isHex(d.sha256),
    )
  );
}

/**
 * The manifest with its transfer fields when `signature_all_fields` verifies and they are well formed; else without
 * them (the plain file is then the only transfer, as for an older publisher). A second signature that does not
 * verify is a tampered manifest: refused.
 */
function withVerifiedTransfers(m: PublishedManifest, publicKey: KeyObject): PublishedManifest {
  const { compressed: _c, deltas: _d, history: _h, signature_all_fields: all, ...plain } = m;
  if (all === undefined) return plain;
  let good = false;
  try {
    good = typeof all === 'string' && verify(null, allFieldsBytes(m), publicKey, Buffer.from(all, 'base64'));
  } catch {
    good = false;
  }
  if (!good) throw new ManifestRefusal('manifest signature_all_fields does not verify with the configured public key');
  return transfersWellFormed(m) ? m : plain;
}
