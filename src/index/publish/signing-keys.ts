/**
 * The publisher's ed25519 key pair on disk: `PREFIX.key` (PKCS#8 PEM, mode
 * 0600) signs manifests; `PREFIX.pub` (one line, `ed25519:<base64 SPKI>`) is
 * what pulling servers are given in IPINTEL_INDEX_PUBKEY.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { writeTextAtomically } from '../../file-io/atomic-text.ts';
import { parsePublicKey, publicKeyLine } from './signed-manifest.ts';

/** Writes `text` to `path` with `mode`, atomically; refuses to replace an existing file. */
function writeNew(path: string, text: string, mode: number): void {
  if (existsSync(path)) throw new Error(`${path} exists; remove it first (a key is never overwritten)`);
  writeTextAtomically(path, text, mode);
}

/** Generates a key pair and writes PREFIX.key (0600) and PREFIX.pub; returns the two paths and the public line. */
export function writeSigningKeyPair(prefix: string): { keyPath: string; pubPath: string; publicLine: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const keyPath = `${prefix}.key`;
  const pubPath = `${prefix}.pub`;
  const publicLine = publicKeyLine(publicKey);
  writeNew(keyPath, privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), 0o600);
  writeNew(pubPath, `${publicLine}\n`, 0o644);
  return { keyPath, pubPath, publicLine };
}

/** Reads the private signing key named by IPINTEL_INDEX_SIGNING_KEY; throws with the reason when it is unusable. */
export function readSigningKey(path: string): KeyObject {
  let text: string;
  try {
    if ((statSync(path).mode & 0o077) !== 0) console.error(`warning: ${path} is readable by other users (chmod 600 it)`);
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read the signing key ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(text);
  } catch {
    throw new Error(`${path} is not a PEM private key`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${path} is a ${key.asymmetricKeyType} key, not ed25519`);
  return key;
}

/** The public key from IPINTEL_INDEX_PUBKEY: the `.pub` line itself, or the path of a file holding it. */
export function readPublicKey(value: string): KeyObject {
  const v = value.trim();
  const looksLikeKey = v.startsWith('ed25519:') || v.startsWith('-----BEGIN');
  return parsePublicKey(looksLikeKey ? v : readFileSync(v, 'utf8'));
}
