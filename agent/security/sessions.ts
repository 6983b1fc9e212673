import { badRequest, tenantMismatch } from '../core/errors.js';
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

/** Clock skew tolerated when checking `exp` (api-behaviour §8.5). */
const LEEWAY_SECS = 60;
const ALGORITHM = 'HS256';

export interface IssuedSession {
  session_token: string;
  expires_in_secs: number;
}

/**
 * Session tokens: HS256 JWTs signed with the session secret, algorithm pinned on both sides (a token
 * whose header names another algorithm, `none` included, never verifies). Claims: `sub`, `key_id`
 * (`session-<sub>`), snake_case `role` (D8), `tenant_id`, `iat`, `exp`, `iss`.
 */
export class SessionTokens {
  private readonly key: Uint8Array;

  constructor(readonly settings: SessionSettings) {
    this.key = new TextEncoder().encode(settings.secret);
  }

  async issue(userId: string, role: Role, now = Math.floor(Date.now() / 1000)): Promise<IssuedSession> {
    const { SignJWT } = await jose();
    const token = await new SignJWT({ key_id: `session-${userId}`, role, tenant_id: this.settings.tenantId })
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
      return toPrincipal(payload);
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
    const issued = await this.issue(principal.user_id!, principal.role, nowSecs);
    return { ...issued, principal };
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

/** A JWT has three non-empty dot-separated segments; only those are tried as sessions (§8.4). */
export function looksLikeJwt(token: string): boolean {
  const parts = token.split('.');
  return parts.length === 3 && parts.every((p) => p.length > 0);
}
