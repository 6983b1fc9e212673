import { ApiError, badRequest, tenantMismatch } from '../core/errors.js';
import type { Principal } from './principal.js';
import { parseRole, type Role } from './rbac.js';

export interface SessionSettings {
  secret: string;
  issuer: string;
  ttlSecs: number;
  refreshWindowSecs: number;
  tenantId: string;
}

/** jose is loaded on first use: an agent that never sees a session token does not pay its start-up cost. */
let joseModule: Promise<typeof import('jose')> | null = null;
const jose = () => (joseModule ??= import('jose'));

/** Clock skew tolerated when checking `exp` (docs/security.md §3). */
const LEEWAY_SECS = 60;
const ALGORITHM = 'HS256';

export interface IssuedSession {
  session_token: string;
  expires_in_secs: number;
}

/**
 * Session tokens: HS256 JWTs signed with the session secret, algorithm pinned on both sides (a token
 * whose header names another algorithm, `none` included, never verifies). Claims: `sub`, `key_id`
 * (`session-<sub>`), snake_case `role` (docs/wire-decisions.md D8), `tenant_id`, `iat`, `exp`, `iss`.
 */
/**
 * Re-reads who a verified session belongs to (docs/security.md §3, "Sessions follow the directory"):
 * the current principal (role from the directory or the key store, not from the token), or null when
 * the user was removed or disabled, or the key revoked.
 */
export type SessionResolver = (claimed: Principal) => Principal | null;

export class SessionTokens {
  private readonly key: Uint8Array;
  private resolver: SessionResolver | null = null;

  constructor(readonly settings: SessionSettings) {
    this.key = new TextEncoder().encode(settings.secret);
  }

  /** Set once by `Credentials`; without one (tests of the token format alone) claims are taken as signed. */
  setResolver(resolver: SessionResolver): void {
    this.resolver = resolver;
  }

  /** A verified principal of this tenant after the resolver; another tenant's is returned as claimed (refused as 403 by the caller). */
  private resolve(claimed: Principal): Principal | null {
    if (claimed.tenant_id !== this.settings.tenantId || !this.resolver) return claimed;
    return this.resolver(claimed);
  }

  async issue(userId: string, role: Role, now = Math.floor(Date.now() / 1000), keyId = `session-${userId}`): Promise<IssuedSession> {
    const { SignJWT } = await jose();
    const token = await new SignJWT({ key_id: keyId, role, tenant_id: this.settings.tenantId })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(userId)
      .setIssuer(this.settings.issuer)
      .setIssuedAt(now)
      .setExpirationTime(now + this.settings.ttlSecs)
      .sign(this.key);
    return { session_token: token, expires_in_secs: this.settings.ttlSecs };
  }

  /** A principal for a valid, unexpired token; null for anything else. */
  async verify(token: string): Promise<Principal | null> {
    const { jwtVerify } = await jose();
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: [ALGORITHM],
        issuer: this.settings.issuer,
        clockTolerance: LEEWAY_SECS,
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      const claimed = toPrincipal(payload);
      return claimed ? this.resolve(claimed) : null;
    } catch {
      return null;
    }
  }

  /**
   * Re-issues a token for the same user, role and tenant. The signature and issuer must verify; the
   * token may be expired, but not by more than the refresh window.
   */
  async refresh(token: string, nowSecs = Math.floor(Date.now() / 1000)): Promise<IssuedSession & { principal: Principal }> {
    const { decodeProtectedHeader, errors, jwtVerify } = await jose();
    let payload;
    try {
      const header = decodeProtectedHeader(token);
      if (header.alg !== ALGORITHM) throw new Error(`unsupported algorithm ${String(header.alg)}`);
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: [ALGORITHM],
        issuer: this.settings.issuer,
        // Expiry is judged below against the refresh window, not here.
        currentDate: new Date(0),
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (err) {
      const detail = err instanceof errors.JOSEError ? err.code : (err as Error).message;
      throw badRequest(`invalid session token: ${detail}`);
    }
    const exp = Number(payload.exp);
    if (nowSecs > exp + this.settings.refreshWindowSecs) throw badRequest('refresh window elapsed');
    const principal = toPrincipal(payload);
    if (!principal) throw badRequest('invalid session token: claims');
    // Re-issuing stamps the instance tenant: a session of another tenant must not be laundered into ours.
    if (principal.tenant_id !== this.settings.tenantId) throw tenantMismatch();
    // The new token carries who the user is now, not what the old token said: a removed or disabled
    // user (or a revoked key) gets nothing, a demoted one the new role (docs/security.md §3).
    const current = this.resolve(principal);
    if (!current) throw new ApiError(401, 'unauthorized', 'session refused: the user was removed or disabled, or the key revoked');
    const issued = await this.issue(current.user_id!, current.role, nowSecs, current.key_id);
    return { ...issued, principal: current };
  }
}

function toPrincipal(payload: Record<string, unknown>): Principal | null {
  const sub = payload['sub'];
  if (typeof sub !== 'string' || sub === '') return null;
  return {
    key_id: typeof payload['key_id'] === 'string' ? payload['key_id'] : `session-${sub}`,
    role: parseRole(payload['role']),
    tenant_id: typeof payload['tenant_id'] === 'string' ? payload['tenant_id'] : '',
    auth_kind: 'session',
    user_id: sub,
  };
}

/** A JWT has three non-empty dot-separated segments; only those are tried as sessions (docs/security.md §2, "Lookup"). */
export function looksLikeJwt(token: string): boolean {
  const parts = token.split('.');
  return parts.length === 3 && parts.every((p) => p.length > 0);
}
