import type { ApiKeyStore } from './api-keys.js';
import type { Principal } from './principal.js';
import type { RelayTokenVerifier } from './relay-tokens.js';
import { looksLikeJwt, type SessionTokens } from './sessions.js';
import type { UserDirectory } from './users.js';

export { constantTimeEqual } from './constant-time.js';

/**
 * Resolves a presented Bearer token to a principal (docs/security.md §2, "Lookup"): a token shaped like a JWT is
 * tried as a session first, then anything is tried as an API key. Unknown tokens resolve to null
 * (anonymous); the caller decides whether that is a refusal.
 */
export class Credentials {
  private readonly extra: Array<(token: string) => Principal | null> = [];
  /**
   * The relay's on-behalf-of verifier, set when the agent runs a relay trunk (`svc serve --relay`);
   * `authenticate.ts` consults it before anything else. Null: relay tokens are unknown tokens.
   */
  relay: RelayTokenVerifier | null = null;

  constructor(
    readonly keys: ApiKeyStore,
    readonly sessions: SessionTokens,
    users?: UserDirectory,
  ) {
    if (users) sessions.setResolver((claimed) => resolveSession(claimed, users, keys));
  }

  /** Adds a further key source (tests and embedders); consulted after sessions and stored keys. */
  addVerifier(verify: (token: string) => Principal | null): void {
    this.extra.push(verify);
  }

  async authenticate(token: string | null): Promise<Principal | null> {
    if (!token) return null;
    if (looksLikeJwt(token)) {
      const session = await this.sessions.verify(token);
      if (session) return session;
    }
    const key = this.keys.authenticate(token);
    if (key) return key;
    for (const verify of this.extra) {
      const p = verify(token);
      if (p) return p;
    }
    return null;
  }

  /** API keys currently loaded (environment key included). */
  get keysLoaded(): number {
    return this.keys.count;
  }
}

/** `Authorization: Bearer <token>`, header and scheme matched case-insensitively (docs/wire-decisions.md D14). */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/**
 * Who a signed session is now (docs/security.md §3, "Sessions follow the directory"). A directory
 * user's session (`key_id` = `session-<sub>`) needs the user to exist and be enabled, and takes the
 * directory's role. A session naming an API key (`key_id` of a stored key) needs the key to exist
 * and takes its role and tenant, so revoking or demoting the key applies to its sessions at once.
 * Anything else is refused. Both are map or array lookups: cheap enough for every request.
 */
export function resolveSession(claimed: Principal, users: UserDirectory, keys: ApiKeyStore): Principal | null {
  const sub = claimed.user_id;
  if (!sub) return null;
  if (claimed.key_id === `session-${sub}`) {
    const user = users.get(sub);
    if (!user || !user.enabled || user.role === 'guest') return null;
    return { ...claimed, role: user.role };
  }
  const key = keys.lookup(claimed.key_id);
  if (!key) return null;
  return { ...claimed, role: key.role, tenant_id: key.tenant_id };
}
