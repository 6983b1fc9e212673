import type { EnrollmentClaims, OnBehalfOfClaims } from '../../api/relay-protocol.js';
import type { Principal } from './principal.js';
import { parseRole } from './rbac.js';

/** jose is loaded on first use, as for sessions: an agent without a relay never loads it for this. */
let joseModule: Promise<typeof import('jose')> | null = null;
const jose = () => (joseModule ??= import('jose'));

const RELAY_ISSUER = 'svc-relay';
const ALGORITHM = 'EdDSA';
/** Clock skew tolerated on `exp`/`iat` of an on-behalf-of token (their lifetime is 60 s). */
const LEEWAY_SECS = 30;

/** The enrollment token, decoded and checked at start (`prepareRelayIdentity`). */
export interface RelayIdentity {
  agentId: string;
  tenantId: string;
  /** The relay's public key (JWK) the token embeds; pinned to verify on-behalf-of tokens. */
  relayKey: Record<string, unknown>;
  /** Epoch seconds; the relay refuses the MQTT connection after it. */
  expiresAt: number;
  token: string;
}

/** Thrown for an enrollment token the agent must not start with; the message names the fix. */
export class EnrollmentTokenError extends Error {}

/**
 * Decodes the enrollment token, checks it is addressed to this agent's tenant and that its signature
 * verifies with the relay key it embeds (self-consistency: a token cut and pasted wrongly, or edited,
 * fails here rather than at the broker). Expiry is not judged here: an expired token is reported
 * (the relay refuses it) but never stops the agent, whose LAN API does not depend on the relay.
 */
export async function prepareRelayIdentity(token: string, tenantId: string, topicId: RegExp): Promise<RelayIdentity> {
  const { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } = await jose();
  let claims: Partial<EnrollmentClaims>;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== ALGORITHM) throw new Error(`algorithm ${String(header.alg)}, expected ${ALGORITHM}`);
    claims = decodeJwt(token) as Partial<EnrollmentClaims>;
  } catch (err) {
    throw new EnrollmentTokenError(`the relay enrollment token is not a valid EdDSA JWT (${(err as Error).message})`);
  }
  if (claims.iss !== RELAY_ISSUER) throw new EnrollmentTokenError(`the relay enrollment token's issuer is ${JSON.stringify(claims.iss)}, expected "${RELAY_ISSUER}"`);
  if (typeof claims.sub !== 'string' || !topicId.test(claims.sub)) throw new EnrollmentTokenError('the relay enrollment token names no usable agent id (sub)');
  if (typeof claims.tenant_id !== 'string' || !topicId.test(claims.tenant_id)) throw new EnrollmentTokenError('the relay enrollment token names no usable tenant (tenant_id)');
  if (claims.tenant_id !== tenantId) {
    throw new EnrollmentTokenError(
      `the relay enrollment token is for tenant '${claims.tenant_id}' but this agent's tenant is '${tenantId}' (SVC_TENANT_ID); enroll the agent for its own tenant or set SVC_TENANT_ID=${claims.tenant_id}`,
    );
  }
  const jwk = claims.relay_key;
  if (!jwk || typeof jwk !== 'object' || jwk['kty'] !== 'OKP' || jwk['crv'] !== 'Ed25519' || typeof jwk['x'] !== 'string' || 'd' in jwk) {
    throw new EnrollmentTokenError('the relay enrollment token carries no Ed25519 public key (relay_key)');
  }
  try {
    const key = await importJWK({ kty: 'OKP', crv: 'Ed25519', x: jwk['x'] as string }, ALGORITHM);
    await jwtVerify(token, key, { algorithms: [ALGORITHM], issuer: RELAY_ISSUER, currentDate: new Date(0), requiredClaims: ['sub', 'exp'] });
  } catch (err) {
    throw new EnrollmentTokenError(`the relay enrollment token's signature does not verify with its relay_key (${(err as Error).message})`);
  }
  return { agentId: claims.sub, tenantId: claims.tenant_id, relayKey: { kty: 'OKP', crv: 'Ed25519', x: jwk['x'] }, expiresAt: Number(claims.exp), token };
}

/** What a presented token is to the relay verifier. */
export type RelayTokenResult = { kind: 'not_relay' } | { kind: 'invalid'; reason: string } | { kind: 'principal'; principal: Principal };

/**
 * Verifies on-behalf-of tokens (api/relay-protocol.ts `OnBehalfOfClaims`) with the relay key pinned
 * at enrollment. Only tokens that claim to be the relay's (EdDSA header, `iss` svc-relay) are judged
 * here; every other token goes on to sessions and API keys. A relay token that fails (another key,
 * another agent, expired, malformed claims) is refused outright rather than left anonymous: it can
 * only have come through (or been lifted from) the relay. Another tenant's valid token becomes a
 * principal of that tenant, which authentication refuses with 403 `tenant_mismatch`, as for keys.
 */
export class RelayTokenVerifier {
  private key: ReturnType<typeof import("jose").importJWK> | null = null;

  constructor(private readonly identity: Pick<RelayIdentity, 'agentId' | 'relayKey'>) {}

  /** Cheap shape test without verifying anything: EdDSA header and relay issuer. */
  static claimsRelay(token: string): boolean {
    const parts = token.split('.');
    if (parts.length !== 3 || !parts.every((p) => p.length > 0)) return false;
    try {
      const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as { alg?: unknown };
      if (header.alg !== ALGORITHM) return false;
      const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { iss?: unknown };
      return payload.iss === RELAY_ISSUER;
    } catch {
      return false;
    }
  }

  async verify(token: string): Promise<RelayTokenResult> {
    if (!RelayTokenVerifier.claimsRelay(token)) return { kind: 'not_relay' };
    const { importJWK, jwtVerify } = await jose();
    this.key ??= importJWK(this.identity.relayKey as import('jose').JWK, ALGORITHM);
    let payload: Partial<OnBehalfOfClaims>;
    try {
      ({ payload } = (await jwtVerify(token, await this.key, {
        algorithms: [ALGORITHM],
        issuer: RELAY_ISSUER,
        audience: this.identity.agentId,
        clockTolerance: LEEWAY_SECS,
        requiredClaims: ['sub', 'aud', 'exp', 'iat'],
      })) as unknown as { payload: Partial<OnBehalfOfClaims> });
    } catch (err) {
      return { kind: 'invalid', reason: (err as { code?: string }).code ?? 'invalid' };
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') return { kind: 'invalid', reason: 'sub' };
    if (typeof payload.tenant_id !== 'string' || payload.tenant_id === '') return { kind: 'invalid', reason: 'tenant_id' };
    const role = typeof payload.role === 'string' ? payload.role.trim().toLowerCase() : '';
    // A role the agent does not know is refused, not mapped to guest: the relay signs roles it read from its own keys.
    const parsed = parseRole(role);
    if (parsed === 'guest' && role !== 'guest') return { kind: 'invalid', reason: 'role' };
    return {
      kind: 'principal',
      principal: {
        key_id: payload.sub,
        role: parsed,
        tenant_id: payload.tenant_id,
        auth_kind: 'relay',
        user_id: typeof payload.user_id === 'string' && payload.user_id !== '' ? payload.user_id : null,
      },
    };
  }
}
