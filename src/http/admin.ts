/** Admin access (`/reload`, `/metrics`): `Authorization: Bearer <IPINTEL_ADMIN_TOKEN>`, compared in constant time. */
import { hashSecret, secretsEqual } from '../accounts/secrets.ts';
import { ApiError } from '../api-error.ts';

/** Whether the request carries the admin token (never when none is configured). */
export function isAdmin(request: Request, adminToken: string | null): boolean {
  const header = request.headers.get('authorization') ?? '';
  const m = /^Bearer\s+(.+)$/i.exec(header.trim());
  // Hashing first makes the comparison length-independent.
  return adminToken !== null && m !== null && secretsEqual(hashSecret(m[1]), hashSecret(adminToken));
}

/** Throws FORBIDDEN unless the request carries the admin token (always when none is configured). */
export function requireAdmin(request: Request, adminToken: string | null): void {
  if (!isAdmin(request, adminToken)) throw new ApiError('FORBIDDEN', 'This route is for the operator only', {});
}
