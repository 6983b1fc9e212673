import type { ApiKeyStore } from './api-keys.js';
import type { Principal } from './principal.js';
import { looksLikeJwt, type SessionTokens } from './sessions.js';

export { constantTimeEqual } from './constant-time.js';

/**
 * Resolves a presented Bearer token to a principal (api-behaviour §8.4): a token shaped like a JWT is
 * tried as a session first, then anything is tried as an API key. Unknown tokens resolve to null
 * (anonymous); the caller decides whether that is a refusal.
 */
export class Credentials {
  private readonly extra: Array<(token: string) => Principal | null> = [];

  constructor(
    readonly keys: ApiKeyStore,
    readonly sessions: SessionTokens,
  ) {}

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

/** `Authorization: Bearer <token>`, header and scheme matched case-insensitively (D14). */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}
