import path from 'node:path';
import { JsonStore } from '../agent/state/json-store.js';
import type { RelayKeys, VerifiedEnrollment } from './keys.js';

/** One revocation: every enrollment token of the agent issued at or before `revoked_before_iat` is refused. */
export interface Revocation {
  agent_id: string;
  /** The tenant, or `*` when the relay administrator revoked the agent id in every tenant. */
  tenant_id: string;
  revoked_before_iat: number;
  revoked_at: string;
}

interface EnrollmentState {
  revocations: Revocation[];
}

export const ENROLLMENTS_FILE = 'relay-enrollments.json';

/**
 * Issues and checks enrollment tokens (docs/relay.md § Enrollment and revocation). Tokens are not
 * stored: a token is valid when the relay's key signed it, it has not expired, and no revocation of
 * its agent is newer than its `iat`. The revocation list is a durable JsonStore in the state directory.
 */
export class Enrollments {
  private constructor(
    private readonly keys: RelayKeys,
    private readonly store: JsonStore<EnrollmentState>,
  ) {}

  static async open(stateDir: string, keys: RelayKeys, log: (line: string) => void): Promise<Enrollments> {
    const store = await JsonStore.open<EnrollmentState>(path.join(stateDir, ENROLLMENTS_FILE), {
      defaults: () => ({ revocations: [] }),
      revive: (raw) => {
        const r = raw as Partial<EnrollmentState>;
        if (!r || !Array.isArray(r.revocations)) throw new Error('expected {revocations: [...]}');
        return { revocations: r.revocations };
      },
      onWarning: (m) => log(`warning: ${m}`),
    });
    return new Enrollments(keys, store);
  }

  private matching(tenantId: string, agentId: string): Revocation[] {
    return this.store.data.revocations.filter((r) => r.agent_id === agentId && (r.tenant_id === tenantId || r.tenant_id === '*'));
  }

  async issue(tenantId: string, agentId: string, ttlSecs: number) {
    const newest = Math.max(0, ...this.matching(tenantId, agentId).map((r) => r.revoked_before_iat));
    const { token, claims } = await this.keys.enroll(tenantId, agentId, ttlSecs, newest + 1);
    return { token, relay_public_key: this.keys.publicJwk, expires_at: new Date(claims.exp * 1000).toISOString(), tenant_id: tenantId, agent_id: agentId, jti: claims.jti };
  }

  isRevoked(e: VerifiedEnrollment): boolean {
    return this.matching(e.tenantId, e.agentId).some((r) => e.iat <= r.revoked_before_iat);
  }

  /** A token that the broker may accept as this agent's password, or null. */
  async check(token: string): Promise<VerifiedEnrollment | null> {
    const e = await this.keys.verifyEnrollment(token);
    if (!e || this.isRevoked(e)) return null;
    return e;
  }

  async revoke(tenantId: string | '*', agentId: string): Promise<Revocation> {
    const rev: Revocation = { agent_id: agentId, tenant_id: tenantId, revoked_before_iat: Math.floor(Date.now() / 1000), revoked_at: new Date().toISOString() };
    this.store.change((d) => {
      d.revocations = d.revocations.filter((r) => !(r.agent_id === agentId && r.tenant_id === tenantId));
      d.revocations.push(rev);
    });
    await this.store.flush();
    return rev;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
