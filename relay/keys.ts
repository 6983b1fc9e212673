import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import { OBO_TTL_SECS, TOPIC_ID, type EnrollmentClaims, type OnBehalfOfClaims } from '../api/relay-protocol.js';

/**
 * The relay's identity (docs/relay.md § Enrollment): one Ed25519 key pair that signs enrollment
 * tokens (the agents' MQTT passwords) and on-behalf-of tokens, and a node secret that relay nodes
 * sharing this state directory present to the embedded broker as `relay:<node>`. Both are files in
 * the state directory, created owner-only (0600) on first use and never rewritten.
 */
export const RELAY_KEY_FILE = 'relay-key.json';
export const NODE_SECRET_FILE = 'relay-node-secret';
export const ISSUER = 'svc-relay';

/** Writes a file only if it does not exist yet (two nodes starting together keep the first one's). */
function writeOnce(file: string, content: string): boolean {
  try {
    fs.writeFileSync(file, content, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

export function parseTtl(text: string): number {
  const m = /^\s*(\d+)\s*([smhd]?)\s*$/i.exec(text);
  if (!m) throw new Error(`--ttl: expected a duration like 3600, 90m, 24h or 30d, got '${text}'`);
  const n = Number(m[1]);
  const unit = (m[2] ?? '').toLowerCase();
  return n * (unit === 'd' ? 86400 : unit === 'h' ? 3600 : unit === 'm' ? 60 : 1);
}

type Key = Awaited<ReturnType<typeof importJWK>>;

export interface VerifiedEnrollment {
  agentId: string;
  tenantId: string;
  jti: string;
  iat: number;
  exp: number;
}

export class RelayKeys {
  private constructor(
    private readonly privateKey: Key,
    readonly publicJwk: JWK,
    private readonly publicKey: Key,
    readonly nodeSecret: string,
  ) {}

  static async open(stateDir: string): Promise<RelayKeys> {
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const keyFile = path.join(stateDir, RELAY_KEY_FILE);
    if (!fs.existsSync(keyFile)) {
      const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
      const priv = await exportJWK(pair.privateKey);
      writeOnce(keyFile, `${JSON.stringify({ alg: 'EdDSA', private_jwk: priv, created_at: new Date().toISOString() }, null, 2)}\n`);
    }
    const stored = JSON.parse(fs.readFileSync(keyFile, 'utf8')) as { private_jwk: JWK };
    const privateJwk = stored.private_jwk;
    const publicJwk: JWK = { kty: privateJwk.kty!, crv: privateJwk.crv!, x: privateJwk.x!, alg: 'EdDSA', use: 'sig' };
    publicJwk.kid = crypto.createHash('sha256').update(publicJwk.x!).digest('base64url').slice(0, 16);
    const privateKey = (await importJWK(privateJwk, 'EdDSA')) as Key;
    const publicKey = (await importJWK(publicJwk, 'EdDSA')) as Key;
    const secretFile = path.join(stateDir, NODE_SECRET_FILE);
    writeOnce(secretFile, `${crypto.randomBytes(32).toString('hex')}\n`);
    const nodeSecret = fs.readFileSync(secretFile, 'utf8').trim();
    for (const f of [keyFile, secretFile]) {
      const mode = fs.statSync(f).mode & 0o777;
      if (process.platform !== 'win32' && (mode & 0o077) !== 0) process.stderr.write(`warning: ${f} is readable by others (mode ${mode.toString(8)}); run chmod 600 on it\n`);
    }
    return new RelayKeys(privateKey, publicJwk, publicKey, nodeSecret);
  }

  /** An enrollment token ({@link EnrollmentClaims}); `notBeforeIat` keeps it newer than a revocation. */
  async enroll(tenantId: string, agentId: string, ttlSecs: number, notBeforeIat = 0): Promise<{ token: string; claims: EnrollmentClaims }> {
    if (!TOPIC_ID.test(tenantId) || !TOPIC_ID.test(agentId)) throw new Error('tenant and agent ids: letters, digits, . _ - (1..128)');
    const iat = Math.max(Math.floor(Date.now() / 1000), notBeforeIat);
    const claims: EnrollmentClaims = {
      iss: ISSUER,
      sub: agentId,
      tenant_id: tenantId,
      relay_key: { ...this.publicJwk },
      jti: crypto.randomUUID(),
      iat,
      exp: iat + ttlSecs,
    };
    const token = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: this.publicJwk.kid! }).sign(this.privateKey);
    return { token, claims };
  }

  /** Signature, issuer, expiry and shape; null for anything else (revocation is checked by the caller). */
  async verifyEnrollment(token: string): Promise<VerifiedEnrollment | null> {
    try {
      const { payload } = await jwtVerify(token, this.publicKey, { issuer: ISSUER, algorithms: ['EdDSA'] });
      const { sub, tenant_id: tenantId, jti, iat, exp } = payload as Partial<EnrollmentClaims>;
      if (typeof sub !== 'string' || typeof tenantId !== 'string' || !TOPIC_ID.test(sub) || !TOPIC_ID.test(tenantId)) return null;
      if (typeof jti !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') return null;
      return { agentId: sub, tenantId, jti, iat, exp };
    } catch {
      return null;
    }
  }

  /** A short-lived on-behalf-of token for one relayed request ({@link OnBehalfOfClaims}). */
  async onBehalfOf(caller: { key_id: string; role: string; tenant_id: string; user_id: string | null }, agentId: string): Promise<string> {
    const iat = Math.floor(Date.now() / 1000);
    const claims: OnBehalfOfClaims = {
      iss: ISSUER,
      sub: caller.key_id,
      aud: agentId,
      tenant_id: caller.tenant_id,
      role: caller.role,
      user_id: caller.user_id,
      jti: crypto.randomUUID(),
      iat,
      exp: iat + OBO_TTL_SECS,
    };
    return new SignJWT({ ...claims }).setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: this.publicJwk.kid! }).sign(this.privateKey);
  }
}
