import crypto from 'node:crypto';
import type { Settings } from '../settings/settings.js';
import type { Principal } from './principal.js';

/** Constant-time string comparison that does not leak the length through early exit. */
export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    // Still spend a comparison so timing does not reveal the length mismatch cheaply.
    crypto.timingSafeEqual(ab, ab);
    return false;
  }
  return crypto.timingSafeEqual(ab, bb);
}

/**
 * Resolves a presented Bearer token to a principal. This build knows the in-memory environment key
 * (`SVC_API_KEY`, key id `env-default`, administrator, instance tenant); key files, admin-created keys
 * and session tokens plug in here through `addVerifier`.
 */
export class Credentials {
  private readonly verifiers: Array<(token: string) => Principal | null> = [];
  private readonly counters: Array<() => number> = [];

  constructor(private readonly settings: Settings) {
    const envKey = settings.apiKey;
    if (envKey) {
      this.verifiers.push((token) =>
        constantTimeEqual(token, envKey)
          ? { key_id: 'env-default', role: 'administrator', tenant_id: settings.tenantId, auth_kind: 'api_key', user_id: null }
          : null,
      );
      this.counters.push(() => 1);
    }
  }

  addVerifier(verify: (token: string) => Principal | null, countKeys?: () => number): void {
    this.verifiers.push(verify);
    if (countKeys) this.counters.push(countKeys);
  }

  authenticate(token: string | null): Principal | null {
    if (!token) return null;
    for (const verify of this.verifiers) {
      const p = verify(token);
      if (p) return p;
    }
    return null;
  }

  /** API keys currently loaded (environment key included). */
  get keysLoaded(): number {
    return this.counters.reduce((n, c) => n + c(), 0);
  }
}

/** `Authorization: Bearer <token>`, header and scheme matched case-insensitively (D14). */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}
