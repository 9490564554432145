/** `bun run index-keygen --out PREFIX`: writes the ed25519 key pair that signs published indexes. */
import { writeSigningKeyPair } from '../index/publish/signing-keys.ts';
import { parseCommandLine } from './command-line.ts';

const USAGE = `usage: bun run index-keygen --out PREFIX

Writes PREFIX.key (the private key, mode 0600: IPINTEL_INDEX_SIGNING_KEY of the publisher) and
PREFIX.pub (the public key as one line: IPINTEL_INDEX_PUBKEY of every pulling server).
An existing file is never overwritten.`;

/** Runs the command with argv; returns the exit code. */
export function main(argv: string[]): number {
  const parsed = parseCommandLine({ args: argv, options: { out: { type: 'string' }, help: { type: 'boolean' } }, strict: true }, USAGE);
  if (typeof parsed === 'number') return parsed;
  const out = parsed.values.out;
  if (!out) {
    console.error(`--out PREFIX is required\n${USAGE}`);
    return 2;
  }
  try {
    const { keyPath, pubPath, publicLine } = writeSigningKeyPair(out);
    console.error(`wrote ${keyPath} (private, keep it secret) and ${pubPath}`);
    console.log(publicLine);
    return 0;
  } catch (e) {
    console.error(`index-keygen: ${(e as Error).message}`);
    return 1;
  }
}
