import { tenantMismatch, type ApiError } from '../../../core/errors.js';
import { publishAuthFailed } from '../../../security/access.js';
import { bearerToken } from '../../../security/credentials.js';
import type { Principal } from '../../../security/principal.js';
import type { Services } from '../../../runtime/services.js';

/**
 * Steps 9 and 11: resolve the Bearer credential (an unknown token just leaves the request
 * anonymous) and refuse a principal of another tenant.
 */
export async function authenticate(
  authorization: string | null | undefined,
  services: Services,
): Promise<{ principal: Principal | null; error: ApiError | null }> {
  const principal = await services.credentials.authenticate(bearerToken(authorization));
  if (principal && principal.tenant_id !== services.settings.tenantId) {
    publishAuthFailed(services.bus, 'tenant_mismatch', principal);
    return { principal, error: tenantMismatch() };
  }
  return { principal, error: null };
}
