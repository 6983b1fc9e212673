import { tenantMismatch, unauthorized, type ApiError } from '../core/errors.js';
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
  // A relay's on-behalf-of token (docs/relay.md, "The agent side"), only when this agent runs a relay
  // trunk: verified with the pinned relay key; one that claims to be the relay's but fails (another
  // key, another agent, expired) is refused with 401 instead of passing as anonymous.
  const relay = deps.credentials.relay;
  if (token && relay) {
    const r = await relay.verify(token);
    if (r.kind === 'invalid') {
      publishAuthFailed(deps.bus, 'missing_or_invalid_token', null, { relay_token: r.reason });
      return { principal: null, error: unauthorized() };
    }
    if (r.kind === 'principal') return checkTenant(r.principal, deps);
  }
  return checkTenant(await deps.credentials.authenticate(token), deps);
}

function checkTenant(principal: Principal | null, deps: AuthDeps): { principal: Principal | null; error: ApiError | null } {
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
