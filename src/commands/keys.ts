/**
 * Operator key management (interface.md):
 *   bun run keys create --email <addr> --tier <free|pro> [--name <name>]
 *   bun run keys list --email <addr> [--json]
 *   bun run keys revoke <id>
 * Works on the database named by IPINTEL_DB (default data/ipintel.sqlite;
 * a postgres:// URL selects PostgreSQL) through the same AccountStore as
 * the server. `create` prints the key
 * alone on the last line of stdout; nothing else ever prints a secret.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import type { AccountStore } from '../accounts/store.ts';
import { openAccountStore } from '../host/open-accounts.ts';
import { checkEmail, checkKeyName, checkKeyTier } from '../accounts/validation.ts';
import { keyView } from '../accounts/views.ts';

const USAGE = `usage:
  bun run keys create --email <addr> --tier <free|pro> [--name <name>]
  bun run keys list --email <addr> [--json]
  bun run keys revoke <id>`;

/** A failure to report on stderr with exit code 2 (usage) or 1 (operation). */
class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

/** Runs one command; resolves with the lines for stdout. The store is opened only once the arguments are valid. */
export async function runKeysCommand(argv: string[], accounts: () => Promise<AccountStore>): Promise<string[]> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: { email: { type: 'string' }, tier: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
    });
  } catch (err) {
    throw new CliError(`${(err as Error).message}\n${USAGE}`, 2);
  }
  const [command, ...rest] = parsed.positionals;
  const o = parsed.values;
  switch (command) {
    case 'create': {
      if (rest.length > 0) throw new CliError(`unexpected argument: ${rest[0]}\n${USAGE}`, 2);
      const email = checkEmail(o.email ?? '');
      if (!email.ok) throw new CliError(`--email: ${email.message}`, 2);
      const tier = checkKeyTier(o.tier);
      if (!tier.ok) throw new CliError(`--tier: ${tier.message}`, 2);
      const name = checkKeyName(o.name ?? `${tier.value} key (operator)`);
      if (!name.ok) throw new CliError(`--name: ${name.message}`, 2);
      const store = await accounts();
      const { user, created, newUser } = await store.grantKeyByEmail(email.value, tier.value, name.value);
      return [
        `${newUser ? 'created user' : 'user'} ${user.email} (${user.id}), account tier ${user.tier}`,
        `key ${created.key.id} ${created.key.prefix}… tier ${created.key.tier}; store it now, it is shown only once:`,
        created.secret,
      ];
    }
    case 'list': {
      if (rest.length > 0) throw new CliError(`unexpected argument: ${rest[0]}\n${USAGE}`, 2);
      const email = checkEmail(o.email ?? '');
      if (!email.ok) throw new CliError(`--email: ${email.message}`, 2);
      const store = await accounts();
      const user = await store.findUserByEmail(email.value);
      if (!user) throw new CliError(`no user with email ${email.value}`, 1);
      const keys = (await store.listKeys(user.id)).map(keyView);
      if (o.json) return [JSON.stringify({ keys }, null, 2)];
      const rows = keys.map((k) => [k.id, k.prefix, k.tier, k.status, k.created_at, k.last_used_at ?? 'never', k.name]);
      return formatTable(['ID', 'PREFIX', 'TIER', 'STATUS', 'CREATED', 'LAST USED', 'NAME'], rows);
    }
    case 'revoke': {
      if (rest.length !== 1) throw new CliError(`revoke takes exactly one key id\n${USAGE}`, 2);
      const id = rest[0]!;
      const store = await accounts();
      const before = await store.getKey(id);
      if (!before) throw new CliError(`no key with id ${id}`, 1);
      const key = (await store.revokeKey(id))!;
      return [before.revokedAt === null ? `revoked key ${key.id} (${key.prefix}…)` : `key ${key.id} was already revoked`];
    }
    default:
      throw new CliError(command ? `unknown command: ${command}\n${USAGE}` : USAGE, 2);
  }
}

/** Pads columns for a plain-text table. */
export function formatTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)];
}

/** `keys` (`bun run keys`, `ipintel keys`): runs one key command on IPINTEL_DB, opened only once the arguments are valid; resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  let store: AccountStore | null = null;
  try {
    const config = loadConfig();
    const lines = await runKeysCommand(argv, async () => (store = await openAccountStore(config.dbPath, { flushIntervalMs: 0, syncIntervalMs: 0 })));
    process.stdout.write(lines.join('\n') + '\n');
    return 0;
  } catch (err) {
    process.stderr.write(`keys: ${(err as Error).message}\n`);
    return err instanceof CliError ? err.exitCode : 1;
  } finally {
    await (store as AccountStore | null)?.close();
  }
}
