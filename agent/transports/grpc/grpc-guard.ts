import type { Metadata } from 'nice-grpc';
import { checkApiVersion } from '../../core/api-version.js';
import { rateLimited, unauthorized } from '../../core/errors.js';
import type { Services } from '../../runtime/services.js';
import { publishAuthFailed } from '../../security/access.js';
import { authenticateToken } from '../../security/authenticate.js';
import { bearerToken } from '../../security/credentials.js';
import type { Principal } from '../../security/principal.js';

/**
 * The token of a call: `authorization` metadata (the `Bearer` scheme matched case-insensitively, docs/wire-decisions.md D14;
 * a bare token is accepted too), else `x-api-key`.
 */
export function tokenOf(metadata: Metadata): string | null {
  const authorization = metadata.get('authorization');
  if (typeof authorization === 'string' && authorization.trim() !== '') {
    const bearer = bearerToken(authorization);
    if (bearer) return bearer;
    const bare = authorization.trim();
    if (!/\s/.test(bare)) return bare;
  }
  const key = metadata.get('x-api-key');
  return typeof key === 'string' && key.trim() !== '' ? key.trim() : null;
}

/**
 * Guard steps 1–4 of docs/grpc.md ("Authentication and metadata"), with the security code REST uses: version metadata (docs/wire-decisions.md D13),
 * token, authentication (an unknown token leaves the caller anonymous), tenant check for API keys
 * and sessions (docs/wire-decisions.md D4). Read policy and role are the operation's access rule (`enforceAccess`).
 */
export async function guardCall(metadata: Metadata, services: Services): Promise<Principal | null> {
  const version = metadata.get('x-svc-api-version');
  const versionError = checkApiVersion(typeof version === 'string' ? version : null);
  if (versionError) throw versionError;
  const auth = await authenticateToken(tokenOf(metadata), services);
  if (auth.error) throw auth.error;
  return auth.principal;
}

/** Guard step 6: the same token buckets as REST, per key id or `anonymous`. */
export function takeRateLimit(principal: Principal | null, services: Services): void {
  const wait = services.rateLimiter.take(principal?.key_id ?? 'anonymous');
  if (wait !== null) throw rateLimited(wait);
}

/** Streams are reads of the telemetry stream, a sensitive read (docs/wire-decisions.md D6): either read flag needs a principal. */
export function checkStreamAccess(principal: Principal | null, rpc: string, services: Services): void {
  const { requireAuthReads, requireAuthAllReads } = services.settings;
  if (!principal && (requireAuthReads || requireAuthAllReads)) {
    publishAuthFailed(services.bus, 'read_auth_required', null, { rpc });
    throw unauthorized();
  }
}
