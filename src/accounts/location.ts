/** Pure: what IPINTEL_DB names — a SQLite file (the default) or a PostgreSQL server. */

export type DbLocation = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

/** `postgres://…` and `postgresql://…` select PostgreSQL; anything else is a SQLite path (`:memory:` included). */
export function parseDbLocation(value: string): DbLocation {
  return /^postgres(ql)?:\/\//i.test(value) ? { dialect: 'postgres', url: value } : { dialect: 'sqlite', path: value };
}

/** The location with any password replaced, for messages (a URL may carry credentials). */
export function redactDbLocation(value: string): string {
  const loc = parseDbLocation(value);
  if (loc.dialect === 'sqlite') return loc.path;
  try {
    const u = new URL(loc.url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
