import { tenantMismatch, type ApiError } from '../core/errors.js';
import type { Services } from '../runtime/services.js';
import { publishAuthFailed } from './access.js';
import { bearerToken } from './credentials.js';
import type { Principal } from './principal.js';

export type AuthDeps = Pick<Services, 'credentials' | 'settings' | 'bus'>;

/**
 * Steps 9 and 11 of every transport (REST, WebSocket, gRPC): resolve a presented token (an unknown
 * token just leaves the caller anonymous) and refuse a principal of another tenant, API key and
 * session alike (docs/wire-decisions.md D4).
 */
export async function authenticateToken(token: string | null, deps: AuthDeps): Promise<{ principal: Principal | null; error: ApiError | null }> {
  const principal = await deps.credentials.authenticate(token);
  if (principal && principal.tenant_id !== deps.settings.tenantId) {
    publishAuthFailed(deps.bus, 'tenant_mismatch', principal);
    return { principal, error: tenantMismatch() };
  }
  return { principal, error: null };
}

/** The same from an `Authorization: Bearer <token>` header value (docs/wire-decisions.md D14). */
export function authenticate(authorization: string | null | undefined, deps: AuthDeps): Promise<{ principal: Principal | null; error: ApiError | null }> {
  return authenticateToken(bearerToken(authorization), deps);
}
